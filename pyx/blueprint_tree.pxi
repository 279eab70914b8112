# The flat betting tree as the blueprint kernels read it (blueprint_cfr, blueprint_mccfr, blueprint_pluribus);
# layout in cfrkit/solvers/blueprint/betting_tree.py.  Each kernel's context holds one as ``c.t``.

cdef struct Tree:
    const signed char* kind        # 0 decision, 1 fold, 2 showdown
    const signed char* player      # acting seat; the folder at a fold
    const signed char* rnd         # betting round 0..3
    const int* child_start
    const int* num_children
    const long long* spent         # [n, 2] chips put in by each seat
    const long long* slot          # first regret / strategy-sum entry of the node


cdef void _bind_tree_arrays(Tree* t, const signed char[::1] kind, const signed char[::1] player,
                            const signed char[::1] rnd, const int[::1] child_start,
                            const int[::1] num_children, const long long[:, ::1] spent,
                            const long long[::1] slot):
    """Point ``t`` at the tree arrays (the caller keeps them alive while the kernel runs)."""
    t.kind = &kind[0]
    t.player = &player[0]
    t.rnd = &rnd[0]
    t.child_start = &child_start[0]
    t.num_children = &num_children[0]
    t.spent = &spent[0, 0]
    t.slot = &slot[0]
