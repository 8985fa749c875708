/* clone3.h - clone3(2), which glibc 2.36 does not wrap, for a child that is
 * born in a given cgroup and, where it can, shares the caller's memory. */
#ifndef TRIAGE_CLONE3_H
#define TRIAGE_CLONE3_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Starts a child running fn(arg), exiting with its result, in the cgroup
 * whose directory cgroup_fd is open on (-1: the caller's), its exit
 * signalled by SIGCHLD. On x86-64 the child shares the caller's memory
 * and runs on stack (stack_size bytes from its lowest address) while the
 * caller waits, as vfork does, until it execs or exits; elsewhere it is a
 * fork, and stack is not used. Returns the child's pid, or -1 with errno:
 * ENOSYS where the kernel (before 5.3) or valgrind has no clone3, EINVAL or
 * E2BIG where it cannot place a child in a cgroup (before 5.7), and what
 * the cgroup refuses (EBUSY: it has controllers enabled for children;
 * EOPNOTSUPP: a threaded one).
 */
pid_t clone3_into(int (*fn)(void *), void *arg, void *stack,
    size_t stack_size, int cgroup_fd);

#endif
