TURNS = ["Say hi"]
REPLIES = {"default_model_agent": ["Hi!"]}
