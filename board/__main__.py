from board.cli import main

raise SystemExit(main())
