// SPDX-License-Identifier: BSD-2-Clause
/*
 * exec* (the new program gets the mask the application sees), and the
 * jumps that restore a mask (setcontext, swapcontext, siglongjmp). See
 * preload.h.
 */
#include "preload.h"

static unsigned long exec_block(void)
{
	unsigned long w = 0;
	sigset_t set;

	if (!sim_signal_blocked())
		return 0;
	sigemptyset(&set);
	sim_signal_add_bits(&set, sim_signal_blocked());
	memcpy(&w, &set, sizeof(w));
	sim_sys6(SYS_rt_sigprocmask, SIG_BLOCK, (long)&w, 0,
		 SIM_KSIGSET_SIZE, 0, 0);
	return w;
}

static int exec_failed(unsigned long w, int ret)
{
	int err = errno;

	if (w)
		sim_sys6(SYS_rt_sigprocmask, SIG_UNBLOCK, (long)&w, 0,
			 SIM_KSIGSET_SIZE, 0, 0);
	errno = err;
	return ret;
}

int execve(const char *path, char *const argv[], char *const envp[])
{
	unsigned long w = exec_block();

	return exec_failed(w, get_execve()(path, argv, envp));
}

int execv(const char *path, char *const argv[])
{
	unsigned long w = exec_block();

	return exec_failed(w, get_execv()(path, argv));
}

int execvp(const char *file, char *const argv[])
{
	unsigned long w = exec_block();

	return exec_failed(w, get_execvp()(file, argv));
}

int execvpe(const char *file, char *const argv[], char *const envp[])
{
	unsigned long w = exec_block();

	return exec_failed(w, get_execvpe()(file, argv, envp));
}

int fexecve(int fd, char *const argv[], char *const envp[])
{
	unsigned long w = exec_block();

	return exec_failed(w, get_fexecve()(fd, argv, envp));
}

/* The list forms, as glibc builds them: argv from the arguments. */
#define EXEC_LIST(first, argv, want_env, envp)				\
	do {								\
		va_list ap_;						\
		size_t n_ = 1;						\
		va_start(ap_, first);					\
		while (va_arg(ap_, char *))				\
			n_++;						\
		va_end(ap_);						\
		argv = alloca((n_ + 1) * sizeof(char *));		\
		argv[0] = (char *)(first);				\
		va_start(ap_, first);					\
		for (size_t i_ = 1; i_ <= n_; i_++)			\
			argv[i_] = va_arg(ap_, char *);			\
		if (want_env)						\
			envp = va_arg(ap_, char **);			\
		va_end(ap_);						\
	} while (0)

int execl(const char *path, const char *arg, ...)
{
	char **argv, **envp = NULL;

	EXEC_LIST(arg, argv, false, envp);
	(void)envp;
	return execv(path, argv);
}

int execlp(const char *file, const char *arg, ...)
{
	char **argv, **envp = NULL;

	EXEC_LIST(arg, argv, false, envp);
	(void)envp;
	return execvp(file, argv);
}

int execle(const char *path, const char *arg, ...)
{
	char **argv, **envp = NULL;

	EXEC_LIST(arg, argv, true, envp);
	return execve(path, argv, envp);
}

/* A context switch sets the mask its context holds. */
int setcontext(const ucontext_t *ucp)
{
	ucontext_t copy = *ucp;

	sim_signal_strip(&copy.uc_sigmask);
	sim_signal_set_blocked(sim_signal_bits(&ucp->uc_sigmask));
	return get_setcontext()(&copy);
}

int swapcontext(ucontext_t *oucp, const ucontext_t *ucp)
{
	unsigned int saved = sim_signal_blocked();
	ucontext_t copy = *ucp;
	int ret;

	sim_signal_strip(&copy.uc_sigmask);
	sim_signal_set_blocked(sim_signal_bits(&ucp->uc_sigmask));
	ret = get_swapcontext()(oucp, &copy);
	/* Back in oucp (or failed): its view was the one saved. */
	sim_signal_set_blocked(saved);
	return ret;
}

/* A long jump restores the mask its sigsetjmp() saved, if it saved one. */
static void jump_mask(const struct __jmp_buf_tag *env)
{
	if (env->__mask_was_saved)
		sim_signal_set_blocked(sim_signal_bits(&env->__saved_mask));
}

void siglongjmp(sigjmp_buf env, int val)
{
	jump_mask(env);
	get_siglongjmp()(env, val);
	__builtin_unreachable();
}

void longjmp(jmp_buf env, int val)
{
	siglongjmp(env, val);
}

void _longjmp(jmp_buf env, int val)
{
	siglongjmp(env, val);
}

void __longjmp_chk(sigjmp_buf env, int val);

void __longjmp_chk(sigjmp_buf env, int val)
{
	jump_mask(env);
	get___longjmp_chk()(env, val);
	__builtin_unreachable();
}
