"""Linear-quadratic control: dprl's practical Private-OFU-RL (practical-ofu-rl, (1, 1e-5)-JDP)
served on the reference system LQ-E1 (family lq, env lq-e1: n = 2, d = 1, H = 10), played by
`dprl client simulate`.

    python python/examples/lq_e1.py --users 2000
"""

from _served import parse, run_family

if __name__ == "__main__":
    args = parse(__doc__.splitlines()[0], default_users=2000)
    run_family(args, "lq", "practical-ofu-rl", {"name": "lq-e1"})
