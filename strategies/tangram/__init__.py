"""Tangram City: the compiled game loop (play.py) and the strategies (random, greedy, planner)."""
