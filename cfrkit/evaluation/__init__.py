"""Evaluation of policies: exact best response and exploitability (compiled trees and the protocol)."""
from cfrkit.evaluation.exploitability import (best_response_policy, best_response_value, best_response_values,
                                              expected_values, exploitability, exploitability_mbb, nash_conv)

__all__ = ["best_response_policy", "best_response_value", "best_response_values", "expected_values",
           "exploitability", "exploitability_mbb", "nash_conv"]
