"""The client matrix's scenario (clients/SCENARIO.md) for the Python clients."""
