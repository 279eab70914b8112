# xoshiro256** seeded by splitmix64, over the ``s[4]`` state of the including kernel's ``Ctx`` struct
# (textual include: ``Ctx`` must be declared first).  Shared by blueprint_mccfr and blueprint_pluribus, so
# that both kernels draw the same numbers from the same seed.

cdef inline uint64_t _rotl(uint64_t x, int k) noexcept nogil:
    return (x << k) | (x >> (64 - k))


cdef inline uint64_t _next(Ctx* c) noexcept nogil:
    cdef uint64_t result = _rotl(c.s[1] * 5, 7) * 9
    cdef uint64_t t = c.s[1] << 17
    c.s[2] ^= c.s[0]
    c.s[3] ^= c.s[1]
    c.s[1] ^= c.s[2]
    c.s[0] ^= c.s[3]
    c.s[2] ^= t
    c.s[3] = _rotl(c.s[3], 45)
    return result


cdef inline double _uniform(Ctx* c) noexcept nogil:
    return (_next(c) >> 11) * (1.0 / 9007199254740992.0)


cdef void _seed(Ctx* c, uint64_t seed) noexcept nogil:
    cdef int i
    cdef uint64_t z
    for i in range(4):
        seed += 0x9E3779B97F4A7C15ULL
        z = seed
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL
        c.s[i] = z ^ (z >> 31)
