from fedcheck.cli import main

raise SystemExit(main())
