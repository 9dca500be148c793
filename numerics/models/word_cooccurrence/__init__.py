"""The word co-occurrence paper in numbers (prefix ``co``): Yang, Kailkhura, Wang, Liang, "Training Dynamics
of Transformers to Recognize Word Co-occurrence via Gradient Flow Analysis", NeurIPS 2024. Modules: ``data``
(the distribution 𝒟 of Def. 2.1, training sets under Assumption 2.3 with the ``random_tokens`` options, test
sets with the ``test_tokens`` options, the named regimes of spec §2.8) and ``model`` (the model and its flow).
"""
