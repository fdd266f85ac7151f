// SPDX-License-Identifier: BSD-2-Clause
/*
 * libc's own functions (real.h): each resolved lazily with
 * dlsym(RTLD_NEXT), so that calls made before the constructor (by other
 * constructors) work.
 */
#include "preload.h"

/* dlsym once per symbol; races only store the same value twice. */
#define REAL(ret, name, ...)						\
	static ret (*real_##name)(__VA_ARGS__);				\
	ret (*get_##name(void))(__VA_ARGS__)				\
	{								\
		ret (*f)(__VA_ARGS__) =					\
			__atomic_load_n(&real_##name, __ATOMIC_ACQUIRE); \
		if (!f) {						\
			f = (ret (*)(__VA_ARGS__))dlsym(RTLD_NEXT, #name); \
			__atomic_store_n(&real_##name, f, __ATOMIC_RELEASE); \
		}							\
		return f;						\
	}

/* Symbols only kept for old binaries (compat versions): ask by version. */
#define REAL_COMPAT(ret, name, ...)					\
	static ret (*real_##name)(__VA_ARGS__);				\
	ret (*get_##name(void))(__VA_ARGS__)				\
	{								\
		ret (*f)(__VA_ARGS__) =					\
			__atomic_load_n(&real_##name, __ATOMIC_ACQUIRE); \
		if (!f) {						\
			f = (ret (*)(__VA_ARGS__))dlvsym(RTLD_NEXT, #name, \
							"GLIBC_2.2.5");	\
			__atomic_store_n(&real_##name, f, __ATOMIC_RELEASE); \
		}							\
		return f;						\
	}

SIM_REAL_FUNCS(REAL, REAL_COMPAT)
SIM_REAL_SYS_FUNCS(REAL)
SIM_REAL_NL_FUNCS(REAL)
