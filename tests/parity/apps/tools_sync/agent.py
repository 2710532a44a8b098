"""One LlmAgent with a plain synchronous function tool."""

from google.adk.agents import Agent


def get_weather(city: str) -> dict:
    """Returns the current weather report for a city.

    Args:
        city: The name of the city.
    """
    reports = {"paris": "sunny, 21 degrees", "oslo": "snow, -3 degrees"}
    report = reports.get(city.lower())
    if report is None:
        return {"status": "error", "error_message": f"No report for {city}."}
    return {"status": "success", "report": report}


root_agent = Agent(
    name="weather_agent",
    model="gemini-2.5-flash",
    description="Answers questions about the weather.",
    instruction="You answer weather questions with the get_weather tool.",
    tools=[get_weather],
)
