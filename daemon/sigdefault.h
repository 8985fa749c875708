/* sigdefault.h - a forked child's way back to a fresh process's signal
 * state, for the worker and for the job it runs. */
#ifndef TRIAGED_SIGDEFAULT_H
#define TRIAGED_SIGDEFAULT_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Sets every disposition to SIG_DFL and unblocks every signal. Returns 0, or
 * -1 with errno, naming the call that failed in *step ("sigaction",
 * "sigprocmask").
 */
int sigdefault_reset(const char **step);

/*
 * fork() with every signal blocked across it, so that no handler of the
 * parent's runs in the child before the child calls sigdefault_reset(); the
 * parent's mask is put back. Returns as fork() does: the child gets 0 (with
 * every signal still blocked), the parent the pid, or -1 with errno.
 */
pid_t sigdefault_fork(void);

/*
 * The same for a child that shares the caller's memory until it execs or
 * exits (clone CLONE_VM | CLONE_VFORK, as posix_spawn does): no page table
 * is copied, and the caller is suspended meanwhile. fn(arg) runs in the
 * child on stack_top (the high end of a stack of its own), with every
 * signal blocked; it must not return, allocate, nor write the caller's
 * memory but what it is meant to. Returns the child's pid once it has
 * exec'd or exited, or -1 with errno.
 */
pid_t sigdefault_vfork(int (*fn)(void *), void *stack_top, void *arg);

/*
 * The same, the child born in the cgroup cgroup_fd is open on (clone3.h's
 * clone3_into, which says where it is a fork instead and which errors say
 * the kernel cannot): stack is the stack's low end, stack_size its size.
 */
pid_t sigdefault_clone3(int (*fn)(void *), void *stack, size_t stack_size,
    void *arg, int cgroup_fd);

#endif
