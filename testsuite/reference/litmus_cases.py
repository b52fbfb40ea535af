"""Named litmus programs with the verdicts the literature (or a hand derivation from the
RC20 definitions, noted) gives them. Used by both test files: the model must reproduce the
verdict, and the runtime must agree with the model."""

R, A, REL, AR, SC = "rlx", "acq", "rel", "ar", "sc"


def sb(st, ld):
    return [[("st", "x", 1, st), ("ld", "y", ld)], [("st", "y", 1, st), ("ld", "x", ld)]]


def mp(st1, st2, ld1, ld2):
    return [[("st", "x", 1, st1), ("st", "y", 1, st2)], [("ld", "y", ld1), ("ld", "x", ld2)]]


# (name, program, sc_accesses mode, robust?)
CASES = [
    # algorithm.md §7 table and RSAN paper Fig. 1 / Ex. 3.2
    ("sb_rlx_not_robust", sb(R, R), "fenced", False),
    ("sb_relacq_not_robust", sb(REL, A), "fenced", False),
    ("sb_sc_fenced_robust", sb(SC, SC), "fenced", True),
    ("sb_sc_ra_not_robust", sb(SC, SC), "ra", False),
    ("sb_sc_fences_robust",
     [[("st", "x", 1, R), ("fence", SC), ("ld", "y", R)],
      [("st", "y", 1, R), ("fence", SC), ("ld", "x", R)]], "fenced", True),
    ("sb_one_sc_fence_not_robust",
     [[("st", "x", 1, R), ("fence", SC), ("ld", "y", R)],
      [("st", "y", 1, R), ("ld", "x", R)]], "fenced", False),
    ("mp_relacq_robust", mp(R, REL, A, R), "fenced", True),
    ("mp_rlx_not_robust", mp(R, R, R, R), "fenced", False),
    ("mp_rel_rlx_not_robust", mp(R, REL, R, R), "fenced", False),
    ("mp_fences_robust",
     [[("st", "x", 1, R), ("fence", REL), ("st", "y", 1, R)],
      [("ld", "y", R), ("fence", A), ("ld", "x", R)]], "fenced", True),
    ("mp_acqrel_fences_robust",
     [[("st", "x", 1, R), ("fence", AR), ("st", "y", 1, R)],
      [("ld", "y", R), ("fence", AR), ("ld", "x", R)]], "fenced", True),
    ("mp_consume_is_acquire_robust", mp(R, REL, "con", R), "fenced", True),
    # RSAN paper Ex. 3.1: SB followed by a second write
    ("ex31_sb_variant_not_robust",
     [[("st", "x", 1, REL), ("ld", "y", A), ("st", "x", 2, REL)],
      [("st", "y", 1, REL), ("ld", "x", A), ("st", "y", 2, REL)]], "fenced", False),
    # RSAN paper Ex. 7.1: 2+2W with reads (release writes)
    ("2+2w_reads_not_robust",
     [[("st", "x", 1, REL), ("st", "y", 2, REL), ("ld", "y", A)],
      [("st", "y", 1, REL), ("st", "x", 2, REL), ("ld", "x", A)]], "fenced", False),
    ("2+2w_sc_fenced_robust",
     [[("st", "x", 1, SC), ("st", "y", 2, SC)], [("st", "y", 1, SC), ("st", "x", 2, SC)]],
     "fenced", True),
    # algorithm.md §7: missed by an hb-only SC fence, found with the full SC fence
    ("sc_fence_both_sides_not_robust",
     [[("st", "x", 1, R), ("st", "z", 1, R)], [("ld", "z", R), ("fence", SC)],
      [("fence", SC), ("ld", "x", R)]], "fenced", False),
    # IRIW: RA (and so RC20) allows the readers to disagree; SC fences between the reads
    # of each reader do not forbid every non-SC graph of the relaxed writers either way, so
    # only the plain versions carry a literature verdict.
    ("iriw_rlx_not_robust",
     [[("st", "x", 1, R)], [("st", "y", 1, R)], [("ld", "x", R), ("ld", "y", R)],
      [("ld", "y", R), ("ld", "x", R)]], "fenced", False),
    ("iriw_relacq_not_robust",
     [[("st", "x", 1, REL)], [("st", "y", 1, REL)], [("ld", "x", A), ("ld", "y", A)],
      [("ld", "y", A), ("ld", "x", A)]], "fenced", False),
    # release writes, relaxed reads, an SC fence between the reads of each reader
    # (hand derivation: the F chain orders the two fences, and the acquire part of the
    # later one makes its reader see the other's write; C11/RC11 forbid IRIW+fences too)
    ("iriw_rel_writes_sc_fences_robust",
     [[("st", "x", 1, REL)], [("st", "y", 1, REL)],
      [("ld", "x", R), ("fence", SC), ("ld", "y", R)],
      [("ld", "y", R), ("fence", SC), ("ld", "x", R)]], "fenced", True),
    # relaxed writes too: the first reader's read of x is hb-before the second reader's,
    # so reading x=0 there is a read-read coherence violation (hb ; eco)
    ("iriw_rlx_writes_sc_fences_robust",
     [[("st", "x", 1, R)], [("st", "y", 1, R)],
      [("ld", "x", R), ("fence", SC), ("ld", "y", R)],
      [("ld", "y", R), ("fence", SC), ("ld", "x", R)]], "fenced", True),
    # load buffering: po ∪ rf acyclicity keeps every graph SC (hand derivation)
    ("lb_rlx_robust",
     [[("ld", "x", R), ("st", "y", 1, R)], [("ld", "y", R), ("st", "x", 1, R)]], "fenced", True),
    # coherence of relaxed reads of one location (CoRR, hand derivation)
    ("corr_rlx_robust",
     [[("st", "x", 1, R)], [("ld", "x", R), ("ld", "x", R)]], "fenced", True),
    # release sequences (C++20 / RC20): an RMW continues one, a plain store breaks it
    # (hand derivation from the definitions)
    ("relseq_through_rmw_robust",
     [[("st", "x", 1, R), ("st", "y", 1, REL)], [("rmw", "y", "add", 1, R)],
      [("ld", "y", A), ("ld", "x", R)]], "fenced", True),
    ("relseq_broken_by_store_not_robust",
     [[("st", "x", 1, R), ("st", "y", 1, REL)], [("st", "y", 2, R)],
      [("ld", "y", A), ("ld", "x", R)]], "fenced", False),
    # a failing weak CAS reads a stale value: SB with CAS for the loads
    ("sb_weak_cas_not_robust",
     [[("st", "x", 1, REL), ("cas", "y", 0, 2, A, A, True)],
      [("st", "y", 1, REL), ("cas", "x", 0, 2, A, A, True)]], "fenced", False),
    ("sb_cas_sc_fenced_robust",
     [[("st", "x", 1, SC), ("cas", "y", 0, 2, SC, SC, True)],
      [("st", "y", 1, SC), ("cas", "x", 0, 2, SC, SC, True)]], "fenced", True),
]
