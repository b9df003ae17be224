/* Can this machine record with Intel PT, and if not, why not. The reasons
 * are written for the user who typed `--backend pt`: name the missing
 * piece (PMU, permission, errno) and the likely cause (a VM). */
#include "ptrev/pt_backend.h"

#include <cpuid.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int real_open_event(struct perf_event_attr *attr, void *ctx)
{
	(void)ctx;
	long fd = syscall(SYS_perf_event_open, attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : (int)fd;
}

static bool cpuid_hypervisor(char *name, size_t len)
{
	unsigned a, b, c, d;
	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 31)))
		return false;
	/* Leaf 0x40000000 names the hypervisor ("KVMKVMKVM", "Microsoft Hv"). */
	__cpuid(0x40000000, a, b, c, d);
	char sig[13];
	memcpy(sig, &b, 4);
	memcpy(sig + 4, &c, 4);
	memcpy(sig + 8, &d, 4);
	sig[12] = 0;
	for (int i = 0; i < 12; i++)
		if (sig[i] && (sig[i] < 0x20 || sig[i] > 0x7e))
			sig[i] = '?';
	snprintf(name, len, "%s", sig);
	return true;
}

static bool file_first_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	bool ok = fgets(buf, (int)len, f) != NULL;
	fclose(f);
	if (ok)
		buf[strcspn(buf, "\n")] = 0;
	return ok;
}

/* The "flags" line of /proc/cpuinfo lists "hypervisor" inside a VM. */
static bool cpuinfo_says_hypervisor(const char *procfs_root)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/cpuinfo", procfs_root);
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	char *line = NULL;
	size_t cap = 0;
	bool found = false;
	while (!found && getline(&line, &cap, f) > 0) {
		if (strncmp(line, "flags", 5) != 0)
			continue;
		for (char *tok = strtok(strchr(line, ':') ? strchr(line, ':') + 1 : line, " \t\n");
		     tok; tok = strtok(NULL, " \t\n"))
			if (strcmp(tok, "hypervisor") == 0)
				found = true;
		break; /* every CPU lists the same flags */
	}
	free(line);
	fclose(f);
	return found;
}

bool pt_detect_hypervisor(const struct pt_probe_env *env, char *what, size_t len)
{
	char name[32] = "";
	if (env->cpuid_hypervisor < 0 ? cpuid_hypervisor(name, sizeof(name))
				      : env->cpuid_hypervisor > 0) {
		if (name[0])
			snprintf(what, len, "cpuid hypervisor bit set (%s)", name);
		else
			snprintf(what, len, "cpuid hypervisor bit set");
		return true;
	}
	char path[4096], line[128];
	snprintf(path, sizeof(path), "%s/hypervisor/type", env->sysfs_root);
	if (file_first_line(path, line, sizeof(line)) && line[0]) {
		snprintf(what, len, "%s: %s", path, line);
		return true;
	}
	if (cpuinfo_says_hypervisor(env->procfs_root)) {
		snprintf(what, len, "'hypervisor' flag in %s/cpuinfo", env->procfs_root);
		return true;
	}
	return false;
}

static int read_paranoid(const char *procfs_root)
{
	char path[4096], line[32];
	snprintf(path, sizeof(path), "%s/sys/kernel/perf_event_paranoid", procfs_root);
	if (!file_first_line(path, line, sizeof(line)))
		return -100; /* unknown */
	return atoi(line);
}

/* Why perf_event_open failed, by errno. vm: the hypervisor description,
 * or "" when none was seen. */
static void explain_open_error(const struct pt_probe_env *env, int e, const char *vm,
			       const struct perf_event_attr *attr, char *why, size_t whylen)
{
	char vmnote[400] = "";
	if (vm[0])
		snprintf(vmnote, sizeof(vmnote), "; running in a VM (%s), which is the likely cause",
			 vm);
	if (e == EACCES || e == EPERM) {
		int par = read_paranoid(env->procfs_root);
		if (par >= 3) {
			snprintf(why, whylen, "perf_event_open refused: perf_event_paranoid is %d; "
				 "run as root or lower /proc/sys/kernel/perf_event_paranoid", par);
			return;
		}
		char parnote[64] = "";
		if (par != -100)
			snprintf(parnote, sizeof(parnote), ", perf_event_paranoid is %d", par);
		snprintf(why, whylen, "perf_event_open refused with %s (%s%s): run as root, grant "
			 "CAP_PERFMON, or lower /proc/sys/kernel/perf_event_paranoid; a seccomp or "
			 "container policy can also refuse it",
			 e == EACCES ? "EACCES" : "EPERM", strerror(e), parnote);
		return;
	}
	switch (e) {
	case ENOENT:
		snprintf(why, whylen, "perf_event_open failed with ENOENT: the kernel knows no PMU "
			 "of type %u (intel_pt driver gone or sysfs out of date)%s",
			 attr->type, vmnote);
		return;
	case EOPNOTSUPP:
		snprintf(why, whylen, "perf_event_open failed with EOPNOTSUPP: intel_pt cannot "
			 "trace a user-space thread here (Processor Trace disabled, or owned by "
			 "a hypervisor or firmware)%s", vmnote);
		return;
	case EBUSY:
		snprintf(why, whylen, "perf_event_open failed with EBUSY: Processor Trace is in "
			 "use by another tracer (another perf session or a kernel user)");
		return;
	case EINVAL:
		snprintf(why, whylen, "perf_event_open failed with EINVAL: the kernel refused the "
			 "intel_pt configuration (config=0x%llx)%s",
			 (unsigned long long)attr->config, vmnote);
		return;
	case ENOSYS:
		snprintf(why, whylen, "perf_event_open failed with ENOSYS: this kernel has no "
			 "perf events (or a sandbox hides the system call)");
		return;
	default:
		snprintf(why, whylen, "perf_event_open on intel_pt failed: %s%s", strerror(e),
			 vmnote);
	}
}

int pt_backend_probe_env(const struct pt_probe_env *env, char *why, size_t whylen)
{
	char vm[256] = "";
	if (!pt_detect_hypervisor(env, vm, sizeof(vm)))
		vm[0] = 0;

	char dir[4096];
	snprintf(dir, sizeof(dir), "%s/bus/event_source/devices/intel_pt", env->sysfs_root);
	if (access(dir, F_OK) < 0) {
		if (vm[0])
			snprintf(why, whylen, "no intel_pt PMU (%s missing): running in a VM (%s) "
				 "that does not expose Intel Processor Trace", dir, vm);
		else
			snprintf(why, whylen, "no intel_pt PMU (%s missing: not an Intel CPU with "
				 "Processor Trace, or running in a VM that does not expose it)", dir);
		return -1;
	}
	struct pt_pmu pmu;
	char sub[512];
	if (pt_pmu_load(env->sysfs_root, &pmu, sub, sizeof(sub)) < 0) {
		snprintf(why, whylen, "intel_pt PMU unusable: %s", sub);
		return -1;
	}
	struct perf_event_attr attr;
	struct pt_backend_opts o = { 0 };
	if (pt_backend_make_attr(&pmu, &o, &attr, sub, sizeof(sub)) < 0) {
		snprintf(why, whylen, "intel_pt PMU unusable: %s", sub);
		return -1;
	}
	int fd = (env->open_event ? env->open_event : real_open_event)(&attr, env->open_ctx);
	if (fd < 0) {
		explain_open_error(env, -fd, vm, &attr, why, whylen);
		return -1;
	}
	close(fd);
	if (whylen)
		why[0] = 0;
	return 0;
}

int pt_backend_probe(char *why, size_t whylen)
{
	struct pt_probe_env env = {
		.sysfs_root = "/sys",
		.procfs_root = "/proc",
		.cpuid_hypervisor = -1,
	};
	return pt_backend_probe_env(&env, why, whylen);
}
