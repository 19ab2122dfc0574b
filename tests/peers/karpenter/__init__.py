"""Karpenter's own tests (kubernetes-sigs/karpenter), ported case by case to dralab's
Karpenter model (``dralab.autoscale.karpenter``)."""
