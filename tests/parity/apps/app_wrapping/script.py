TURNS = ["Roll a d6"]
REPLIES = {"dice_agent": [{"call": "roll_die", "args": {"sides": 6}}, "You rolled a 4."]}
