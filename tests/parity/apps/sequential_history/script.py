TURNS = ["A weekend in Rome"]
REPLIES = {
    "planner": ["1. fly 2. hotel 3. museum"],
    "booker": ["Booked flight AZ1 and Hotel Roma."],
    "reporter": ["Your Rome weekend: flight AZ1, Hotel Roma, Vatican museum."],
}
