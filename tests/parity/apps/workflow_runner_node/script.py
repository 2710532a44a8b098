NODE_PATHS = True
RUNNER = "node"
APP_NAME = "newsroom"
TURNS = ["a new bridge opens"]
REPLIES = {"headline_writer": ["Bridge Opens, City Cheers"]}
