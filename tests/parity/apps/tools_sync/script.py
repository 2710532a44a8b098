TURNS = ["What is the weather in Paris?", "And in Lima?"]
REPLIES = {
    "weather_agent": [
        {"call": "get_weather", "args": {"city": "Paris"}},
        "It is sunny in Paris, 21 degrees.",
        {"call": "get_weather", "args": {"city": "Lima"}},
        "I have no report for Lima.",
    ]
}
