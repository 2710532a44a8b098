TURNS = ["Renewables report"]
REPLIES = {
    "solar_researcher": ["Solar panels convert about 20% of sunlight."],
    "wind_researcher": ["One turbine can power 1500 homes."],
    "merger": ["Solar converts 20% of sunlight; a turbine powers 1500 homes."],
}
