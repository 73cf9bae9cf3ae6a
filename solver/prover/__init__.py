"""The prover: alpha-beta search for boards too big to enumerate, opening books and the atlas."""
