/* Calling a target: each operation is asked of the top of the stack, and
 * of the target beneath when a target does not implement it, as gdb's
 * target stack delegates; where none does, the documented default
 * (include/ptrev/target.h). */
#include "ptrev/target.h"

#include <errno.h>
#include <stdlib.h>

/* The first target from t down that implements op, or NULL. */
#define OWNER(t, op) for (; (t) && !(t)->ops->op; (t) = (t)->beneath)

pid_t target_pid(struct target *t)
{
	OWNER(t, pid);
	return t ? t->ops->pid(t) : 0;
}

bool target_alive(struct target *t)
{
	OWNER(t, alive);
	return t && t->ops->alive(t);
}

bool target_report_forks(struct target *t, bool *fork, bool *vfork, bool *exec)
{
	OWNER(t, report_forks);
	if (!t) {
		*fork = *vfork = *exec = false;
		return false;
	}
	return t->ops->report_forks(t, fork, vfork, exec);
}

pid_t target_fork_child(struct target *t)
{
	OWNER(t, fork_child);
	return t ? t->ops->fork_child(t) : 0;
}

int target_detach_fork_child(struct target *t)
{
	OWNER(t, detach_fork_child);
	return t ? t->ops->detach_fork_child(t) : -1;
}

int target_follow_fork_child(struct target *t)
{
	OWNER(t, follow_fork_child);
	return t ? t->ops->follow_fork_child(t) : -1;
}

bool target_attached(struct target *t)
{
	OWNER(t, attached);
	return t && t->ops->attached(t);
}

size_t target_threads(struct target *t, pid_t **ids)
{
	*ids = NULL;
	OWNER(t, threads);
	return t ? t->ops->threads(t, ids) : 0;
}

bool target_thread_exists(struct target *t, pid_t tid)
{
	pid_t *ids;
	size_t n = target_threads(t, &ids);
	bool found = false;
	for (size_t i = 0; i < n && !found; i++)
		found = ids[i] == tid;
	free(ids);
	return found;
}

void target_thread_info(struct target *t, pid_t tid, char *name, size_t namelen, int *core)
{
	if (namelen)
		name[0] = '\0';
	*core = -1;
	OWNER(t, thread_info);
	if (t)
		t->ops->thread_info(t, tid, name, namelen, core);
}

bool target_can_reverse(struct target *t)
{
	OWNER(t, can_reverse);
	return t && t->ops->can_reverse(t);
}

bool target_can_record(struct target *t)
{
	OWNER(t, can_record);
	return t && t->ops->can_record(t);
}

int target_resume(struct target *t, const struct target_resume *r)
{
	OWNER(t, resume);
	return t ? t->ops->resume(t, r) : TARGET_REFUSED;
}

int target_wait(struct target *t, struct target_stop *stop, bool block)
{
	OWNER(t, wait);
	return t ? t->ops->wait(t, stop, block) : -1;
}

int target_interrupt(struct target *t)
{
	OWNER(t, interrupt);
	return t ? t->ops->interrupt(t) : -1;
}

int target_pause(struct target *t)
{
	OWNER(t, pause);
	return t ? t->ops->pause(t) : -1;
}

int target_current_stop(struct target *t, pid_t current, const struct target_stop *last,
			struct target_stop *stop)
{
	OWNER(t, current_stop);
	return t ? t->ops->current_stop(t, current, last, stop) : -1;
}

void target_pass_signals(struct target *t, const bool pass[65])
{
	OWNER(t, pass_signals);
	if (t)
		t->ops->pass_signals(t, pass);
}

int target_fetch_registers(struct target *t, pid_t tid, struct amd64_regfile *rf)
{
	OWNER(t, fetch_registers);
	return t ? t->ops->fetch_registers(t, tid, rf) : -1;
}

int target_store_registers(struct target *t, pid_t tid, const struct amd64_regfile *rf)
{
	OWNER(t, store_registers);
	return t ? t->ops->store_registers(t, tid, rf) : -1;
}

ssize_t target_read_memory(struct target *t, pid_t tid, uint64_t addr, void *buf, size_t len)
{
	OWNER(t, read_memory);
	return t ? t->ops->read_memory(t, tid, addr, buf, len) : -1;
}

ssize_t target_write_memory(struct target *t, pid_t tid, uint64_t addr, const void *buf,
			    size_t len)
{
	OWNER(t, write_memory);
	return t ? t->ops->write_memory(t, tid, addr, buf, len) : -1;
}

uint64_t target_xcr0(struct target *t)
{
	OWNER(t, xcr0);
	return t ? t->ops->xcr0(t) : 0;
}

int target_insert_point(struct target *t, int type, uint64_t addr, int len)
{
	OWNER(t, insert_point);
	return t ? t->ops->insert_point(t, type, addr, len) : -1;
}

int target_remove_point(struct target *t, int type, uint64_t addr, int len)
{
	OWNER(t, remove_point);
	return t ? t->ops->remove_point(t, type, addr, len) : -1;
}

int target_auxv(struct target *t, struct strbuf *out)
{
	OWNER(t, auxv);
	return t ? t->ops->auxv(t, out) : -ESRCH;
}

int target_exec_file(struct target *t, struct strbuf *out)
{
	OWNER(t, exec_file);
	return t ? t->ops->exec_file(t, out) : -ESRCH;
}

int target_libraries_svr4(struct target *t, pid_t tid, const char *annex, struct strbuf *out)
{
	OWNER(t, libraries_svr4);
	return t ? t->ops->libraries_svr4(t, tid, annex, out) : -ESRCH;
}

int target_siginfo(struct target *t, pid_t tid, struct strbuf *out)
{
	OWNER(t, siginfo);
	return t ? t->ops->siginfo(t, tid, out) : -EINVAL;
}

int target_proc_file(struct target *t, const char *path, struct strbuf *out)
{
	OWNER(t, proc_file);
	return t ? t->ops->proc_file(t, path, out) : -ENOENT;
}

pid_t target_fs_pid(struct target *t)
{
	OWNER(t, fs_pid);
	return t ? t->ops->fs_pid(t) : 0;
}

int target_btrace_pt(struct target *t, pid_t tid, const uint8_t **pt, size_t *len)
{
	OWNER(t, btrace_pt);
	return t ? t->ops->btrace_pt(t, tid, pt, len) : -1;
}

int target_btrace_mark(struct target *t, pid_t tid, uint64_t *offset)
{
	OWNER(t, btrace_mark);
	return t ? t->ops->btrace_mark(t, tid, offset) : -1;
}

void target_btrace_active(struct target *t, bool on)
{
	OWNER(t, btrace_active);
	if (t)
		t->ops->btrace_active(t, on);
}

bool target_monitor(struct target *t, pid_t current, const char *cmd, const char *arg,
		    struct strbuf *out)
{
	OWNER(t, monitor);
	return t && t->ops->monitor(t, current, cmd, arg, out);
}

void target_set_alive(struct target *t, bool (*alive)(void *ctx), void *ctx)
{
	OWNER(t, set_alive);
	if (t)
		t->ops->set_alive(t, alive, ctx);
}

bool target_state_unavailable(struct target *t, pid_t tid, struct strbuf *out)
{
	OWNER(t, state_unavailable);
	return t && t->ops->state_unavailable(t, tid, out);
}

bool target_move_note(struct target *t, struct strbuf *out)
{
	OWNER(t, move_note);
	return t && t->ops->move_note(t, out);
}

int target_detach(struct target *t)
{
	OWNER(t, detach);
	return t ? t->ops->detach(t) : -1;
}

void target_kill(struct target *t)
{
	OWNER(t, kill);
	if (t)
		t->ops->kill(t);
}

void target_free(struct target *t)
{
	while (t) {
		struct target *beneath = t->beneath;
		t->ops->destroy(t);
		t = beneath;
	}
}
