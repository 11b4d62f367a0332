"""The GTV paper's experiment family: the claims of its Section VI (Table I, Figs. 2-7) that share the family-wise
alpha of :class:`verify.harness.Family` (each claim's alpha is 0.05 over the members listed here), declared in
:mod:`verify.gtv.experiments`, :mod:`verify.gtv.clusters_chain` and :mod:`verify.gtv.digits`."""

from verify.harness import Baseline, Family

__all__ = ["FAMILY", "FEDAVG", "FEDAVGC", "IFCA"]

FAMILY = Family(paper="gtv", name="experiments of Section VI", members=(
    "gtv.table1_algorithm1",
    "gtv.table1_fedavg",
    "gtv.table1_ifca",
    "gtv.table1_ordering",
    "gtv.several_clusters",
    "gtv.chain_trends",
    "gtv.digits_local",
    "gtv.digits_pooled",
    "gtv.digits_ifca",
    "gtv.digits_five_clusters",
))

#: The baselines of Section VI (docs/papers/gtv.md): published algorithms the paper cites, run with the settings it
#: leaves open stated in each claim's hypotheses (and IFCA's initialisation decided over a grid).
FEDAVG = Baseline(name="FedAvg", source="paper",
                  provenance="McMahan et al.'s server model averaging with local gradient steps, as Section VI cites "
                             "it; local steps, rounds and step size are fedcheck's (stated in the hypotheses)")
IFCA = Baseline(name="IFCA", source="paper",
                provenance="Ghosh et al.'s iterative federated clustering [19] with k models and model averaging, as "
                           "Section VI cites it; its initialisation is unreported (a grid choice)")
FEDAVGC = Baseline(name="FedAvgC", source="paper",
                   provenance="FedAvg run on each true cluster (Section VI-A-2's benchmark), computed exactly as its "
                              "cluster-wise fixed point")
