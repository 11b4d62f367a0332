"""Mean and mean-square analysis of PAO-Fed: expectations, the block-Kronecker 𝓕, MSD, stability."""

from theory.msd.instance import PAOFedInstance, reference_instance, selection_second_moment

__all__ = ["PAOFedInstance", "reference_instance", "selection_second_moment"]
