"""The induction-head paper (prefix ``ih``): closed forms as printed and as derived."""
