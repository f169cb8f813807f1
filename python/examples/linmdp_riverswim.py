"""Linear MDPs: dprl's practical private LSVI-UCB (practical-lsvi, (1, 1e-5)-JDP) served on
RiverSwim-OneHot (family linmdp, env riverswim: n = 6 states, d = 12, H = 20), played by
`dprl client simulate`.

    python python/examples/linmdp_riverswim.py --users 2000
"""

from _served import parse, run_family

if __name__ == "__main__":
    args = parse(__doc__.splitlines()[0], default_users=2000)
    run_family(args, "linmdp", "practical-lsvi", {"name": "riverswim", "params": {"n": 6}})
