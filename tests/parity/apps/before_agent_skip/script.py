STATE = {"cached_summary": "Cats sleep a lot."}
TURNS = ["A long text about cats and their naps."]
REPLIES = {"translator": ["Les chats dorment beaucoup."]}
