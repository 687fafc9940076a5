"""How long a lease lasts unless its taker says otherwise: light, for the command line's parser."""

DEFAULT_LEASE_SECONDS = 30.0
