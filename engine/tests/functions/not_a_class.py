"""Imports fine but lacks the class the tests ask for."""

VALUE = 1
