"""Shared foundations: seeds, rungs, rank estimators, atomic io, progress, the job runner.

Imports nothing else of the project.
"""
