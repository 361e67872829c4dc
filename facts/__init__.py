"""Inputs to typed facts: fact models, sniffing, one parser per tool format, derived facts."""
