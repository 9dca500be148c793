"""The papers' models: reduced ODEs and the actual transformers."""
