"""What the cycle, the command line and the web inbox share over the database: ratings and the reading list, search, a step's failure."""
