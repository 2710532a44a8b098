"""An async function tool, called twice in one model response."""

import asyncio

from google.adk.agents import LlmAgent


async def lookup_stock(symbol: str) -> dict:
    """Looks up the last price of a stock symbol."""
    await asyncio.sleep(0)
    prices = {"GOOG": 181.5, "MSFT": 420.25}
    return {"symbol": symbol, "price": prices.get(symbol, 0.0)}


root_agent = LlmAgent(
    name="stock_agent",
    model="gemini-2.5-flash",
    instruction="Look up every stock price the user asks for.",
    tools=[lookup_stock],
)
