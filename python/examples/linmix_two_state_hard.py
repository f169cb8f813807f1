"""Linear mixture MDPs: dprl's practical private UCRL-VTR (practical-vtr/jdp, (1, 1e-5)-JDP)
served on TwoStateHard (family linmix, env two-state-hard: d = 5, H = 10), played by
`dprl client simulate`.

    python python/examples/linmix_two_state_hard.py --users 2000
"""

from _served import parse, run_family

if __name__ == "__main__":
    args = parse(__doc__.splitlines()[0], default_users=2000)
    run_family(args, "linmix", "practical-vtr/jdp", {"name": "two-state-hard"})
