"""Simulation studies: the paired-test battery, simulated collections and error-rate studies."""

from fastrisk.simulate.battery import BatteryResult, battery

__all__ = ["BatteryResult", "battery"]
