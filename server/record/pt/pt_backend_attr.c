/* The intel_pt PMU as sysfs describes it (type, format/, caps/) and the
 * perf_event_attr we record with. Bit positions are never hard-coded:
 * they come from the format files, as perf itself does, so a kernel that
 * moves a field still gets the right bits. */
#include "ptrev/pt_backend.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Read a small sysfs file into buf, trailing newline removed. */
static int read_small_file(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	size_t n = fread(buf, 1, len - 1, f);
	int bad = ferror(f);
	fclose(f);
	if (bad)
		return -1;
	buf[n] = 0;
	while (n > 0 && isspace((unsigned char)buf[n - 1]))
		buf[--n] = 0;
	return 0;
}

int pt_format_parse(const char *name, const char *text, struct pt_format_field *f)
{
	memset(f, 0, sizeof(*f));
	if (strlen(name) >= sizeof(f->name))
		return -1;
	strcpy(f->name, name);
	const char *p = text;
	if (strncmp(p, "config", 6) != 0)
		return -1;
	p += 6;
	if (*p == ':')
		f->word = 0;
	else if ((p[0] == '1' || p[0] == '2') && p[1] == ':')
		f->word = *p++ - '0';
	else
		return -1;
	p++; /* the ':' */
	if (!isdigit((unsigned char)*p))
		return -1;
	char *e;
	unsigned long lo = strtoul(p, &e, 10), hi = lo;
	if (*e == '-') {
		p = e + 1;
		if (!isdigit((unsigned char)*p))
			return -1;
		hi = strtoul(p, &e, 10);
	}
	while (isspace((unsigned char)*e))
		e++;
	/* A field made of several ranges ("config:0-3,8") is legal sysfs
	 * syntax but no intel_pt field uses it; refuse rather than guess. */
	if (*e || lo > hi || hi > 63)
		return -1;
	f->lo = (unsigned)lo;
	f->hi = (unsigned)hi;
	return 0;
}

static int load_formats(const char *dir, struct pt_pmu *pmu, char *why, size_t whylen)
{
	DIR *d = opendir(dir);
	if (!d) {
		snprintf(why, whylen, "cannot read %s: %s", dir, strerror(errno));
		return -1;
	}
	struct dirent *de;
	int rc = 0;
	while ((de = readdir(d)) && rc == 0) {
		if (de->d_name[0] == '.')
			continue;
		char path[4608], text[128];
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (read_small_file(path, text, sizeof(text)) < 0) {
			snprintf(why, whylen, "cannot read %s: %s", path, strerror(errno));
			rc = -1;
		} else if (pmu->nfields == PT_PMU_MAX_FIELDS) {
			snprintf(why, whylen, "%s: more than %d format fields", dir, PT_PMU_MAX_FIELDS);
			rc = -1;
		} else if (pt_format_parse(de->d_name, text, &pmu->fields[pmu->nfields]) < 0) {
			snprintf(why, whylen, "%s: unexpected format \"%s\" (want configN:LO[-HI])",
				 path, text);
			rc = -1;
		} else {
			pmu->nfields++;
		}
	}
	closedir(d);
	return rc;
}

/* caps/ files hold hex numbers; a missing file means the capability is
 * absent (older kernels expose fewer). */
static uint32_t read_cap(const char *pmudir, const char *name)
{
	char path[4608], text[64];
	snprintf(path, sizeof(path), "%s/caps/%s", pmudir, name);
	if (read_small_file(path, text, sizeof(text)) < 0)
		return 0;
	return (uint32_t)strtoul(text, NULL, 16);
}

int pt_pmu_load(const char *sysfs_root, struct pt_pmu *pmu, char *why, size_t whylen)
{
	memset(pmu, 0, sizeof(*pmu));
	char dir[4096], path[4200], text[64];
	snprintf(dir, sizeof(dir), "%s/bus/event_source/devices/intel_pt", sysfs_root);
	if (access(dir, F_OK) < 0) {
		snprintf(why, whylen, "no intel_pt PMU (%s missing)", dir);
		return -1;
	}
	snprintf(path, sizeof(path), "%s/type", dir);
	if (read_small_file(path, text, sizeof(text)) < 0) {
		snprintf(why, whylen, "cannot read %s: %s", path, strerror(errno));
		return -1;
	}
	char *e;
	errno = 0;
	unsigned long type = strtoul(text, &e, 10);
	if (!isdigit((unsigned char)text[0]) || *e || errno || type > UINT32_MAX) {
		snprintf(why, whylen, "%s: not a PMU type number: \"%s\"", path, text);
		return -1;
	}
	pmu->type = (uint32_t)type;
	snprintf(path, sizeof(path), "%s/format", dir);
	if (load_formats(path, pmu, why, whylen) < 0)
		return -1;
	pmu->cap_psb_cyc = read_cap(dir, "psb_cyc");
	pmu->cap_psb_periods = read_cap(dir, "psb_periods");
	return 0;
}

const struct pt_format_field *pt_pmu_field(const struct pt_pmu *pmu, const char *name)
{
	for (size_t i = 0; i < pmu->nfields; i++)
		if (strcmp(pmu->fields[i].name, name) == 0)
			return &pmu->fields[i];
	return NULL;
}

int pt_pmu_set(const struct pt_pmu *pmu, struct perf_event_attr *attr, const char *name,
	       uint64_t value, char *err, size_t errlen)
{
	const struct pt_format_field *f = pt_pmu_field(pmu, name);
	if (!f) {
		snprintf(err, errlen, "intel_pt has no format field \"%s\"", name);
		return -1;
	}
	unsigned width = f->hi - f->lo + 1;
	uint64_t mask = width == 64 ? ~0ull : (1ull << width) - 1;
	if (value & ~mask) {
		snprintf(err, errlen, "intel_pt %s=%llu does not fit in %u bit(s)", name,
			 (unsigned long long)value, width);
		return -1;
	}
	uint64_t *word = f->word == 0 ? (uint64_t *)&attr->config
		       : f->word == 1 ? (uint64_t *)&attr->config1
				      : (uint64_t *)&attr->config2;
	*word = (*word & ~(mask << f->lo)) | (value << f->lo);
	return 0;
}

static bool pow2_pages(size_t n)
{
	long page = sysconf(_SC_PAGESIZE);
	return n >= (size_t)page && (n & (n - 1)) == 0;
}

int pt_backend_sizes(const struct pt_backend_opts *o, size_t *aux_bytes, size_t *data_bytes,
		     char *err, size_t errlen)
{
	*aux_bytes = o && o->aux_bytes ? o->aux_bytes
		   : geteuid() == 0 ? PT_BACKEND_DEFAULT_AUX_BYTES : PT_BACKEND_DEFAULT_AUX_BYTES_USER;
	*data_bytes = o && o->data_bytes ? o->data_bytes : PT_BACKEND_DEFAULT_DATA_BYTES;
	if (!pow2_pages(*aux_bytes)) {
		snprintf(err, errlen, "PT AUX area size %zu is not a power of two pages", *aux_bytes);
		return -1;
	}
	if (!pow2_pages(*data_bytes)) {
		snprintf(err, errlen, "perf data ring size %zu is not a power of two pages",
			 *data_bytes);
		return -1;
	}
	return 0;
}

int pt_backend_make_attr(const struct pt_pmu *pmu, const struct pt_backend_opts *o,
			 struct perf_event_attr *attr, char *err, size_t errlen)
{
	size_t aux_bytes, data_bytes;
	if (pt_backend_sizes(o, &aux_bytes, &data_bytes, err, errlen) < 0)
		return -1;
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = pmu->type;

	/* "pt" (bit 0) tells the kernel we set BranchEn ourselves; without it
	 * the kernel forces branch tracing on and refuses an explicit branch
	 * bit. Old kernels have neither field: branches are traced anyway. */
	if (pt_pmu_field(pmu, "pt") && pt_pmu_field(pmu, "branch")) {
		if (pt_pmu_set(pmu, attr, "pt", 1, err, errlen) < 0 ||
		    pt_pmu_set(pmu, attr, "branch", 1, err, errlen) < 0)
			return -1;
	}
	/* TSC packets let sideband (perf time) be placed in the trace. */
	if (pt_pmu_set(pmu, attr, "tsc", 1, err, errlen) < 0)
		return -1;
	/* Keep RET compression: it is what the hardware does by default and
	 * what the decoder expects; fewer bytes per call/return pair. */
	if (pt_pmu_field(pmu, "noretcomp") &&
	    pt_pmu_set(pmu, attr, "noretcomp", 0, err, errlen) < 0)
		return -1;
	int period = o ? o->psb_period : 0;
	if (period > 0) {
		if (!pmu->cap_psb_cyc) {
			snprintf(err, errlen, "psb_period %d asked for, but this CPU cannot change "
				 "the PSB period (caps/psb_cyc is 0)", period);
			return -1;
		}
		if (period > 31 || !(pmu->cap_psb_periods & (1u << period))) {
			snprintf(err, errlen, "psb_period %d not supported (caps/psb_periods is 0x%x)",
				 period, pmu->cap_psb_periods);
			return -1;
		}
		if (pt_pmu_set(pmu, attr, "psb_period", (uint64_t)period, err, errlen) < 0)
			return -1;
	}

	attr->disabled = 1;        /* enabled once the rings are mapped */
	attr->exclude_kernel = 1;  /* user space only: no privilege needed */
	attr->exclude_hv = 1;
	attr->sample_id_all = 1;   /* every sideband record says who and when */
	attr->sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	attr->mmap = 1;            /* executable mappings: where code came from */
	attr->mmap2 = 1;
	attr->comm = 1;
	attr->comm_exec = 1;
	attr->task = 1;
	/* Wake poll() when a quarter of the AUX area is full, so the recorder
	 * drains it long before the hardware has to stop. */
	attr->aux_watermark = (uint32_t)(aux_bytes / 4 > UINT32_MAX ? UINT32_MAX : aux_bytes / 4);
	attr->watermark = 1;
	attr->wakeup_watermark = (uint32_t)(data_bytes / 2);
	return 0;
}
