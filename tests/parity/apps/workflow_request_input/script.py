NODE_PATHS = True
TURNS = [
    "my parcel is late",
    {"respond": "adk_request_input", "response": {"result": "approve"}},
]
REPLIES = {}
