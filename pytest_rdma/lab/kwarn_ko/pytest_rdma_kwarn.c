// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The lab's kernel-fault provoker: loading this module makes the kernel itself log a
 * WARNING (cut-here line, the message, the WARNING line with file:line and function,
 * registers, call trace, end-trace line), exactly as a driver bug would. pytest-rdma's
 * kernel-log guard is tested against that record.
 *
 * `nonce` is put in the warning's message so a test can tell its own record from any
 * other. The init function then fails, so the module never stays loaded and can be
 * loaded again for the next warning.
 */
#include <linux/bug.h>
#include <linux/errno.h>
#include <linux/init.h>
#include <linux/module.h>
#include <linux/moduleparam.h>

static char *nonce = "none";
module_param(nonce, charp, 0);
MODULE_PARM_DESC(nonce, "text put in the warning's message, so a test can find its own record");

static int __init pytest_rdma_kwarn_init(void)
{
	WARN(1, "pytest-rdma provoked warning %s\n", nonce);
	/* ECANCELED (not a generic error) tells the loader the warning was raised on purpose. */
	return -ECANCELED;
}
module_init(pytest_rdma_kwarn_init);

MODULE_DESCRIPTION("pytest-rdma lab: raises one kernel WARNING when loaded, then refuses to stay loaded");
MODULE_LICENSE("Dual BSD/GPL");
