"""Streamlit UI tests: AppTest over a fake facade, and a real-browser test (marked browser + slow)."""
