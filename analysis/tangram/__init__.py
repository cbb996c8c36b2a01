"""Tangram City analyses and report sections (``sections.add_sections``), the A/B comparison
of two runs on the same deals (``compare``), and a stop-gap standalone report (``report``)."""
