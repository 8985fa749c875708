/* clone3.c - clone3(2), which glibc 2.36 does not wrap, for a child that is
 * born in a given cgroup and, where it can, shares the caller's memory. */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/sched.h>

#include "clone3.h"

#if defined(__x86_64__)
/*
 * The child of a clone3 with a stack of its own starts on that stack, with
 * nothing to return to: it runs fn(arg) there and exits with its result,
 * all in one asm statement, as glibc's own clone wrappers do. The parent
 * comes out with the child's pid (or -errno) in rax. syscall clobbers rcx
 * and r11; fn and arg ride in r12 and r13, which it keeps, into the child.
 */
static long
clone3_raw(struct clone_args *args, int (*fn)(void *), void *arg)
{
	register long rax __asm__("rax") = SYS_clone3;
	register void *r12 __asm__("r12") = (void *)(uintptr_t)fn;
	register void *r13 __asm__("r13") = arg;

	__asm__ volatile(
	    "syscall\n\t"
	    "testq %%rax, %%rax\n\t"
	    "jnz 1f\n\t"
	    /* The child: a frame chain that ends here, then fn(arg). */
	    "xorl %%ebp, %%ebp\n\t"
	    "movq %%r13, %%rdi\n\t"
	    "callq *%%r12\n\t"
	    "movl %%eax, %%edi\n\t"
	    "movl %[exit], %%eax\n\t"
	    "syscall\n\t"
	    "hlt\n"
	    "1:"
	    : "+r"(rax)
	    : "D"(args), "S"(sizeof *args), "r"(r12), "r"(r13),
	      [exit] "i"(SYS_exit)
	    : "rcx", "r11", "memory");
	return rax;
}
#define CLONE3_SHARES_MEMORY 1
#endif

pid_t
clone3_into(int (*fn)(void *), void *arg, void *stack, size_t stack_size,
    int cgroup_fd)
{
	struct clone_args args;
	long r;

	memset(&args, 0, sizeof args);
	args.exit_signal = SIGCHLD;
	if (cgroup_fd >= 0) {
		args.flags |= CLONE_INTO_CGROUP;
		args.cgroup = (uint64_t)cgroup_fd;
	}
#ifdef CLONE3_SHARES_MEMORY
	/* Aligned for the call the child makes: the ABI wants 16. */
	stack_size &= ~(size_t)15;
	args.flags |= CLONE_VM | CLONE_VFORK;
	args.stack = (uint64_t)(uintptr_t)stack;
	args.stack_size = stack_size;
	r = clone3_raw(&args, fn, arg);
	if (r < 0) {
		errno = (int)-r;
		return -1;
	}
	return (pid_t)r;
#else
	/* Elsewhere a fork: the child has a copy of the caller's memory and
	 * goes on from here, on the stack it was on. */
	(void)stack;
	(void)stack_size;
	r = syscall(SYS_clone3, &args, sizeof args);
	if (r == 0)
		_exit(fn(arg));
	return (pid_t)r;
#endif
}
