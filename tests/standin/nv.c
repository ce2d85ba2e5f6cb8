// SPDX-License-Identifier: GPL-2.0
/*
 * Stand-in nvidia.ko, kernel interface layer: module parameters, the
 * simulated GPUs, /proc/driver/nvidia/version and the debugfs control
 * files that tests/standin/nvflow drives.  The RM core is nv-kernel.c.
 *
 * Control (/sys/kernel/debug/nvidia-standin/):
 *   ctl       write one command, read back its key=value answer
 *   state     per-GPU state (same as the "state" command)
 *   stubs     the first bytes of each NVOC stub, read from module text
 *   registry  the registry the next GPU (re)initialisation reads;
 *             write "Key=Value;..." to replace it
 *   hold      hold points: write "hold POINT", "release POINT" or
 *             "release all"; read one line per point (armed, parked now,
 *             parked since load, the CPUs the parked calls were on)
 *
 * No lock is taken here: the RM core takes the RM API lock and the GPU
 * locks in each entry point, as the real RM does (nv-kernel.c).
 */
#include <linux/module.h>
#include <linux/kernel.h>
#include <linux/init.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/ctype.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/sched.h>
#include <linux/smp.h>
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <linux/debugfs.h>
#include <linux/uaccess.h>
#include <linux/sizes.h>
#include <linux/pci.h>

#include "nv-standin.h"
#include "standin-ctl.h"
#include "nv-uvm-standin.h"
#include "standin-hold.h"

#define NV_STANDIN_RESP_SIZE	4096
#define NV_STANDIN_CMD_MAX	256

static char *gpus = "AD102@0000:01:00.0,vram=24G,bar1=0x4000000000/32G;"
		    "AD102@0000:02:00.0,vram=24G,bar1=0x4800000000/32G";
module_param(gpus, charp, 0444);
MODULE_PARM_DESC(gpus, "Simulated GPUs: CHIP@DOMAIN:BUS:DEV.FN[,vram=SIZE][,fb=SIZE][,console=SIZE][,bar1=ADDR/SIZE][,switch=N];...");

static char *nvlink = "";
module_param(nvlink, charp, 0444);
MODULE_PARM_DESC(nvlink, "NVLink-connected GPU pairs: A-B[,A-B...]");

static char *NVreg_RegistryDwords = "";
module_param(NVreg_RegistryDwords, charp, 0444);
MODULE_PARM_DESC(NVreg_RegistryDwords, "Registry keys: Key=Value[;Key=Value...]");

static char *NVreg_RegistryDwordsPerDevice = "";
module_param(NVreg_RegistryDwordsPerDevice, charp, 0444);
MODULE_PARM_DESC(NVreg_RegistryDwordsPerDevice,
		 "Registry keys per GPU: pci=DDDD:BB:DD.F;Key=Value;...;pci=...");

static char *fail_gh100 = "";
module_param(fail_gh100, charp, 0444);
MODULE_PARM_DESC(fail_gh100, "Name of a _GH100 body that fails (fault injection)");

static char *cpu = "ryzen";
module_param(cpu, charp, 0444);
MODULE_PARM_DESC(cpu, "Host CPU type for BAR1 P2P reads: ryzen, xeon_spr or other");

static bool unload_destroys;
module_param(unload_destroys, bool, 0444);
MODULE_PARM_DESC(unload_destroys, "On unload, tear live P2P objects down through the RM first");

unsigned int nv_standin_fail_post_construct;
module_param_named(fail_post_construct, nv_standin_fail_post_construct, uint, 0644);
MODULE_PARM_DESC(fail_post_construct,
		 "Mask of GPU instances whose next attach fails after its registry reads (gpuPostConstruct failing; cleared as it fires)");

unsigned int nv_standin_attach_no_pci;
module_param_named(attach_no_pci, nv_standin_attach_no_pci, uint, 0644);
MODULE_PARM_DESC(attach_no_pci,
		 "Test knob: mask of GPU instances whose attach argument carries no readable PCI address (nvDomainBusDeviceFunc all ones)");

static unsigned int hold_timeout = 30;
module_param(hold_timeout, uint, 0644);
MODULE_PARM_DESC(hold_timeout, "Seconds a call stays parked at a hold point before it goes on by itself");


static struct dentry *nv_standin_debugfs;
static struct proc_dir_entry *nv_proc_dir;

/* ------------------------------------------------------------------ */
/* Parameter parsing */

/* "0000:01:00.0" */
static int nv_parse_bdf(const char *s, struct nv_standin_gpu_desc *g)
{
	unsigned int domain, bus, dev, fn;
	char tail;

	if (sscanf(s, "%x:%x:%x.%x%c", &domain, &bus, &dev, &fn, &tail) != 4 ||
	    bus > 0xff || dev > 0x1f || fn > 7)
		return -EINVAL;
	g->domain = domain;
	g->bus = bus;
	g->dev = dev;
	g->fn = fn;
	return 0;
}

static int nv_parse_size(const char *s, u64 *size)
{
	char *end;

	*size = memparse(s, &end);
	return (*end || !*size) ? -EINVAL : 0;
}

static int nv_parse_gpu(char *spec, unsigned int index,
			struct nv_standin_gpu_desc *g)
{
	char *opt, *at = strchr(spec, '@');
	char *rest;

	if (!at)
		return -EINVAL;
	*at = '\0';
	if (!*spec || strlen(spec) >= sizeof(g->chip))
		return -EINVAL;
	strscpy(g->chip, spec, sizeof(g->chip));
	rest = at + 1;
	opt = strsep(&rest, ",");
	if (nv_parse_bdf(opt, g))
		return -EINVAL;

	/* Defaults: a 24 GiB card with a 32 GiB BAR1 in its own window. */
	g->vram_size = SZ_1G * 24ULL;
	g->bar1_base = 0x4000000000ULL + index * 0x2000000000ULL;
	g->bar1_size = SZ_1G * 32ULL;
	g->pcie_switch = -1;

	while ((opt = strsep(&rest, ",")) != NULL) {
		char *val = strchr(opt, '=');

		if (!val)
			return -EINVAL;
		*val++ = '\0';
		if (!strcmp(opt, "vram")) {
			if (nv_parse_size(val, &g->vram_size))
				return -EINVAL;
		} else if (!strcmp(opt, "fb")) {
			if (nv_parse_size(val, &g->fb_size))
				return -EINVAL;
		} else if (!strcmp(opt, "console")) {
			if (nv_parse_size(val, &g->console_size))
				return -EINVAL;
		} else if (!strcmp(opt, "bar1")) {
			char *slash = strchr(val, '/');

			if (!slash)
				return -EINVAL;
			*slash = '\0';
			if (kstrtou64(val, 0, &g->bar1_base) ||
			    nv_parse_size(slash + 1, &g->bar1_size))
				return -EINVAL;
		} else if (!strcmp(opt, "switch")) {
			if (kstrtoint(val, 0, &g->pcie_switch))
				return -EINVAL;
		} else {
			return -EINVAL;
		}
	}
	return 0;
}

static int nv_parse_gpus(struct nv_standin_config *cfg)
{
	char *buf, *rest, *spec;
	int ret = 0;

	buf = kstrdup(gpus, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	rest = buf;
	while ((spec = strsep(&rest, ";")) != NULL) {
		spec = strim(spec);
		if (!*spec)
			continue;
		if (cfg->num_gpus == NV_STANDIN_MAX_GPUS ||
		    nv_parse_gpu(spec, cfg->num_gpus, &cfg->gpu[cfg->num_gpus])) {
			pr_err("NVRM: bad gpus= entry '%s'\n", spec);
			ret = -EINVAL;
			break;
		}
		cfg->num_gpus++;
	}
	kfree(buf);
	return ret;
}

static int nv_parse_nvlink(struct nv_standin_config *cfg)
{
	char *buf, *rest, *pair;
	int ret = 0;

	buf = kstrdup(nvlink, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	rest = buf;
	while ((pair = strsep(&rest, ",;")) != NULL) {
		unsigned int a, b;
		char tail;

		if (!*pair)
			continue;
		if (sscanf(pair, "%u-%u%c", &a, &b, &tail) != 2 ||
		    a >= cfg->num_gpus || b >= cfg->num_gpus || a == b) {
			pr_err("NVRM: bad nvlink= pair '%s'\n", pair);
			ret = -EINVAL;
			break;
		}
		cfg->nvlink[a] |= BIT(b);
		cfg->nvlink[b] |= BIT(a);
	}
	kfree(buf);
	return ret;
}

/* "Key=Value;Key2=Value2" into the RM registry (os-registry.c's job). */
static int nv_parse_registry(const char *text)
{
	char *buf, *rest, *entry;
	int ret = 0;

	buf = kstrdup(text, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	rm_standin_registry_clear();
	rest = buf;
	while ((entry = strsep(&rest, ";")) != NULL) {
		char *val;
		u32 v;

		entry = strim(entry);
		if (!*entry)
			continue;
		val = strchr(entry, '=');
		if (!val) {
			ret = -EINVAL;
			break;
		}
		*val++ = '\0';
		if (kstrtou32(strim(val), 0, &v)) {
			ret = -EINVAL;
			break;
		}
		ret = rm_standin_registry_write(strim(entry), v);
		if (ret)
			break;
	}
	kfree(buf);
	return ret;
}

/*
 * NVreg_RegistryDwordsPerDevice (nv-reg.h): "pci=DDDD:BB:DD.F;Key=Value;...",
 * the pci= entry naming the GPU the keys after it are for; keys after a
 * pci= that names no GPU are skipped.  Accepted forms of the address:
 * bus:slot, domain:bus:slot, domain:bus:slot.func.
 */
static int nv_parse_registry_per_device(const struct nv_standin_config *cfg,
					const char *text)
{
	char *buf, *rest, *entry;
	int gpu = -2, ret = 0;	/* -2: no pci= yet, -3: pci= of no GPU */

	buf = kstrdup(text, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	rest = buf;
	while ((entry = strsep(&rest, ";")) != NULL) {
		unsigned int d = 0, b, s, f = 0, i;
		char *val;
		u32 v;

		entry = strim(entry);
		if (!*entry)
			continue;
		val = strchr(entry, '=');
		if (!val) {
			ret = -EINVAL;
			break;
		}
		*val++ = '\0';
		val = strim(val);
		if (!strcmp(strim(entry), "pci")) {
			if (sscanf(val, "%x:%x:%x.%x", &d, &b, &s, &f) != 4 &&
			    (f = 0, sscanf(val, "%x:%x:%x", &d, &b, &s) != 3) &&
			    (d = 0, sscanf(val, "%x:%x", &b, &s) != 2)) {
				ret = -EINVAL;
				break;
			}
			gpu = -3;
			for (i = 0; i < cfg->num_gpus; i++)
				if (cfg->gpu[i].domain == d && cfg->gpu[i].bus == b &&
				    cfg->gpu[i].dev == s && cfg->gpu[i].fn == f)
					gpu = i;
			continue;
		}
		if (gpu == -2 || kstrtou32(val, 0, &v)) {
			ret = -EINVAL;
			break;
		}
		if (gpu >= 0)
			ret = rm_standin_registry_write_dev(gpu, strim(entry), v);
		if (ret)
			break;
	}
	kfree(buf);
	return ret;
}

/* ------------------------------------------------------------------ */
/* ctl: one command per write, its answer on read */

struct nv_ctl_file {
	char *resp;
	size_t len;
};

static const char *const nv_type_names[] = {
	"unknown", "pcie", "pcie_bar1", "nvlink", "nvlink_indirect", "c2c",
};

static int nv_parse_type(const char *s)
{
	unsigned int i;

	for (i = 1; i < ARRAY_SIZE(nv_type_names); i++)
		if (!strcmp(s, nv_type_names[i]))
			return i;
	return -EINVAL;
}

static int nv_ctl_run(int argc, char **argv, struct seq_buf *out)
{
	u32 a, b;
	u64 x, y;

	if (argc == 1 && !strcmp(argv[0], "state")) {
		rm_standin_state(out);
		return 0;
	}
	if (argc == 4 && !strcmp(argv[0], "bench")) {
		u32 n;

		if (kstrtou32(argv[1], 0, &a) || kstrtou32(argv[2], 0, &b) ||
		    kstrtou32(argv[3], 0, &n))
			return -EINVAL;
		return rm_standin_bench(a, b, n, out);
	}
	if (argc == 3 && !strcmp(argv[0], "caps")) {
		if (kstrtou32(argv[1], 0, &a) || kstrtou32(argv[2], 0, &b))
			return -EINVAL;
		return rm_standin_caps(a, b, out);
	}
	if ((argc == 3 || argc == 5) && !strcmp(argv[0], "create")) {
		int type = NV_STANDIN_TYPE_FROM_CAPS;

		if (kstrtou32(argv[1], 0, &a) || kstrtou32(argv[2], 0, &b))
			return -EINVAL;
		if (argc == 5) {
			if (strcmp(argv[3], "--type"))
				return -EINVAL;
			type = nv_parse_type(argv[4]);
			if (type < 0)
				return -EINVAL;
		}
		return rm_standin_create(a, b, type, out);
	}
	if (argc == 5 && !strcmp(argv[0], "map")) {
		bool uvm;

		if (kstrtou32(argv[1], 0, &a) || kstrtou64(argv[2], 0, &x) ||
		    kstrtou64(argv[3], 0, &y))
			return -EINVAL;
		if (!strcmp(argv[4], "uvm"))
			uvm = true;
		else if (!strcmp(argv[4], "rm"))
			uvm = false;
		else
			return -EINVAL;
		return rm_standin_map(a, x, y, uvm, out);
	}
	if (argc == 2 && kstrtou32(argv[1], 0, &a) == 0) {
		if (!strcmp(argv[0], "unmap"))
			return rm_standin_unmap(a, out);
		if (!strcmp(argv[0], "destroy"))
			return rm_standin_destroy(a, out);
		if (!strcmp(argv[0], "reinit"))
			return rm_standin_reinit(a, false, out);
		if (!strcmp(argv[0], "reinit-unseen"))
			return rm_standin_reinit(a, true, out);
		if (!strcmp(argv[0], "winfree"))
			return rm_standin_winfree(a, out);
		return -EINVAL;
	}
	if (argc == 5 && !strcmp(argv[0], "bar1map")) {
		if (kstrtou32(argv[1], 0, &a) || kstrtou64(argv[2], 0, &x) ||
		    kstrtou64(argv[3], 0, &y))
			return -EINVAL;
		if (strcmp(argv[4], "contig") && strcmp(argv[4], "noncontig"))
			return -EINVAL;
		return rm_standin_bar1map(a, x, y, argv[4][0] == 'c', out);
	}
	if (argc == 4 && !strcmp(argv[0], "bar1unmap")) {
		if (kstrtou32(argv[1], 0, &a) || kstrtou64(argv[2], 0, &x) ||
		    kstrtou64(argv[3], 0, &y))
			return -EINVAL;
		return rm_standin_bar1unmap(a, x, y, out);
	}
	if (argc == 6 && !strcmp(argv[0], "window")) {
		u64 z;

		if (kstrtou32(argv[1], 0, &a) || kstrtou32(argv[2], 0, &b) ||
		    kstrtou64(argv[3], 0, &x) || kstrtou64(argv[4], 0, &y) ||
		    kstrtou64(argv[5], 0, &z))
			return -EINVAL;
		return rm_standin_window(a, b, x, y, z, out);
	}
	if (argc == 6 && !strcmp(argv[0], "winsoak")) {
		u32 n;

		if (kstrtou32(argv[1], 0, &a) || kstrtou32(argv[2], 0, &b) ||
		    kstrtou64(argv[3], 0, &x) || kstrtou64(argv[4], 0, &y) ||
		    kstrtou32(argv[5], 0, &n))
			return -EINVAL;
		return rm_standin_winsoak(a, b, x, y, n, out);
	}
	if (argc == 4 && !strcmp(argv[0], "alloc")) {
		if (kstrtou32(argv[1], 0, &a) || kstrtou64(argv[2], 0, &x))
			return -EINVAL;
		if (strcmp(argv[3], "plain") && strcmp(argv[3], "compressed"))
			return -EINVAL;
		return rm_standin_alloc(a, x, argv[3][0] == 'c', out);
	}
	if (argc == 4 && (!strcmp(argv[0], "local") || !strcmp(argv[0], "sysmem"))) {
		if (kstrtou32(argv[1], 0, &a) || kstrtou64(argv[2], 0, &x) ||
		    kstrtou64(argv[3], 0, &y))
			return -EINVAL;
		if (argv[0][0] == 'l')
			return rm_standin_local(a, x, y, out);
		return rm_standin_sysmem(a, x, y, out);
	}
	return -EINVAL;
}

static int nv_ctl_open(struct inode *inode, struct file *file)
{
	struct nv_ctl_file *f = kzalloc(sizeof(*f), GFP_KERNEL);

	if (!f)
		return -ENOMEM;
	f->resp = kzalloc(NV_STANDIN_RESP_SIZE, GFP_KERNEL);
	if (!f->resp) {
		kfree(f);
		return -ENOMEM;
	}
	file->private_data = f;
	return nonseekable_open(inode, file);
}

static int nv_ctl_release(struct inode *inode, struct file *file)
{
	struct nv_ctl_file *f = file->private_data;

	kfree(f->resp);
	kfree(f);
	return 0;
}

static ssize_t nv_ctl_write(struct file *file, const char __user *ubuf,
			    size_t count, loff_t *ppos)
{
	struct nv_ctl_file *f = file->private_data;
	char cmd[NV_STANDIN_CMD_MAX], *argv[8];
	struct seq_buf out;
	int argc, ret;

	argc = standin_ctl_words(cmd, sizeof(cmd), ubuf, count, argv, ARRAY_SIZE(argv));
	if (argc < 0)
		return argc;

	seq_buf_init(&out, f->resp, NV_STANDIN_RESP_SIZE);
	ret = nv_ctl_run(argc, argv, &out);
	f->len = ret ? 0 : seq_buf_used(&out);
	return ret ? ret : count;
}

static ssize_t nv_ctl_read(struct file *file, char __user *ubuf, size_t count,
			   loff_t *ppos)
{
	struct nv_ctl_file *f = file->private_data;

	/* The answer of the last write, from its start. */
	return simple_read_from_buffer(ubuf, count, ppos, f->resp, f->len);
}

/*
 * No .llseek: lseek then fails with -ESPIPE on every kernel (no_llseek is
 * NULL from 6.1.y and gone from 6.12; before, a NULL llseek meant it).
 */
static const struct file_operations nv_ctl_fops = {
	.owner = THIS_MODULE,
	.open = nv_ctl_open,
	.release = nv_ctl_release,
	.write = nv_ctl_write,
	.read = nv_ctl_read,
};

/* Read-only views: state, stubs, registry. */
static int nv_show_buffered(struct seq_file *m,
			    void (*fill)(struct seq_buf *out))
{
	char *buf = kzalloc(NV_STANDIN_RESP_SIZE, GFP_KERNEL);
	struct seq_buf out;

	if (!buf)
		return -ENOMEM;
	seq_buf_init(&out, buf, NV_STANDIN_RESP_SIZE);
	fill(&out);
	seq_write(m, buf, seq_buf_used(&out));
	kfree(buf);
	return 0;
}

static int nv_state_show(struct seq_file *m, void *v)
{
	return nv_show_buffered(m, rm_standin_state);
}
DEFINE_SHOW_ATTRIBUTE(nv_state);

static int nv_stubs_show(struct seq_file *m, void *v)
{
	return nv_show_buffered(m, rm_standin_stubs);
}
DEFINE_SHOW_ATTRIBUTE(nv_stubs);

static ssize_t nv_registry_write(struct file *file, const char __user *ubuf,
				 size_t count, loff_t *ppos)
{
	char *text;
	int ret;

	if (count >= PAGE_SIZE)
		return -EINVAL;
	text = memdup_user_nul(ubuf, count);
	if (IS_ERR(text))
		return PTR_ERR(text);
	rm_standin_api_acquire(true);
	ret = nv_parse_registry(text);
	rm_standin_api_release(true);
	kfree(text);
	return ret ? ret : count;
}

static int nv_registry_show(struct seq_file *m, void *v)
{
	return nv_show_buffered(m, rm_standin_registry_show);
}

static int nv_registry_open(struct inode *inode, struct file *file)
{
	return single_open(file, nv_registry_show, NULL);
}

static const struct file_operations nv_registry_fops = {
	.owner = THIS_MODULE,
	.open = nv_registry_open,
	.read = seq_read,
	.write = nv_registry_write,
	.llseek = seq_lseek,
	.release = single_release,
};

/* ------------------------------------------------------------------ */
/*
 * The UVM interface (nv_uvm_interface.c): exported, for the stand-in
 * nvidia-uvm.ko.  No lock here: as the real nvGpuOps* calls go through
 * the RM API (RMAPI_EXTERNAL_KERNEL), the RM core takes the RM API lock and
 * the GPU locks inside (nv-kernel.c, "Locking").
 */

u32 nvUvmInterfaceDeviceCreate(u32 gpuInstance, uvmGpuDeviceHandle *device,
			       u32 *gpuArch)
{
	return rm_standin_uvm_device_create(gpuInstance, device, gpuArch);
}
EXPORT_SYMBOL(nvUvmInterfaceDeviceCreate);

void nvUvmInterfaceDeviceDestroy(uvmGpuDeviceHandle device)
{
	rm_standin_uvm_device_destroy(device);
}
EXPORT_SYMBOL(nvUvmInterfaceDeviceDestroy);

u32 nvUvmInterfaceP2pObjectCreate(uvmGpuDeviceHandle device1,
				  uvmGpuDeviceHandle device2, u32 *hP2pObject)
{
	return rm_standin_uvm_p2p_create(device1, device2, hP2pObject);
}
EXPORT_SYMBOL(nvUvmInterfaceP2pObjectCreate);

void nvUvmInterfaceP2pObjectDestroy(void *session, u32 hP2pObject)
{
	rm_standin_uvm_p2p_destroy(hP2pObject);
}
EXPORT_SYMBOL(nvUvmInterfaceP2pObjectDestroy);

u32 nvUvmInterfaceGetP2PCaps(uvmGpuDeviceHandle device1,
			     uvmGpuDeviceHandle device2,
			     UvmGpuP2PCapsParams *p2pCapsParams)
{
	return rm_standin_uvm_get_p2p_caps(device1, device2, p2pCapsParams);
}
EXPORT_SYMBOL(nvUvmInterfaceGetP2PCaps);

/* ------------------------------------------------------------------ */
/*
 * Hold points (standin-hold.h): "hold POINT" arms one; every call that
 * reaches it then sleeps until "release POINT" (or "release all").  A call
 * never stays parked longer than hold_timeout seconds: then the point is
 * released by itself, with a line in the log (no WARN: a test that forgets
 * a release fails on its own expectations, not on the kernel's).  A signal
 * releases the one call it is sent to.
 */
static const char *const nv_hold_names[NV_STANDIN_HOLD_COUNT] = {
	[NV_STANDIN_HOLD_ATTACH] = "attach",
	[NV_STANDIN_HOLD_CAPS] = "caps",
	[NV_STANDIN_HOLD_CREATE] = "create",
	[NV_STANDIN_HOLD_PTE] = "pte",
	[NV_STANDIN_HOLD_SB1] = "sb1",
};

#define NV_HOLD_CPUS	8

static struct {
	bool armed;
	unsigned int parked;		/* calls parked now */
	unsigned long total;		/* calls parked since load */
	unsigned int on_cpu[NV_HOLD_CPUS]; /* parked now, by the CPU they parked on */
} nv_holds[NV_STANDIN_HOLD_COUNT];
static DEFINE_SPINLOCK(nv_hold_lock);
static DECLARE_WAIT_QUEUE_HEAD(nv_hold_wq);

static bool nv_hold_armed(enum nv_standin_hold_point point)
{
	bool armed;

	spin_lock(&nv_hold_lock);
	armed = nv_holds[point].armed;
	spin_unlock(&nv_hold_lock);
	return armed;
}

void nv_standin_hold(enum nv_standin_hold_point point)
{
	unsigned int cpu;
	long left;

	if (point >= NV_STANDIN_HOLD_COUNT)
		return;
	spin_lock(&nv_hold_lock);
	if (!nv_holds[point].armed) {
		spin_unlock(&nv_hold_lock);
		return;
	}
	cpu = min_t(unsigned int, raw_smp_processor_id(), NV_HOLD_CPUS - 1);
	nv_holds[point].parked++;
	nv_holds[point].total++;
	nv_holds[point].on_cpu[cpu]++;
	spin_unlock(&nv_hold_lock);
	pr_info("NVRM: standin: %s[%d] parked at hold point %s on CPU %u\n",
		current->comm, task_pid_nr(current), nv_hold_names[point], cpu);

	left = wait_event_interruptible_timeout(nv_hold_wq, !nv_hold_armed(point),
						READ_ONCE(hold_timeout) * HZ);

	spin_lock(&nv_hold_lock);
	nv_holds[point].parked--;
	nv_holds[point].on_cpu[cpu]--;
	if (left == 0 && nv_holds[point].armed) {
		nv_holds[point].armed = false;
		pr_info("NVRM: standin: hold point %s released by itself after %u s\n",
			nv_hold_names[point], READ_ONCE(hold_timeout));
		wake_up_all(&nv_hold_wq);
	}
	spin_unlock(&nv_hold_lock);
}
EXPORT_SYMBOL(nv_standin_hold);

static int nv_hold_set(const char *name, bool arm)
{
	unsigned int i;
	int ret = -EINVAL;

	spin_lock(&nv_hold_lock);
	for (i = 0; i < NV_STANDIN_HOLD_COUNT; i++) {
		if (strcmp(name, nv_hold_names[i]) && (arm || strcmp(name, "all")))
			continue;
		nv_holds[i].armed = arm;
		ret = 0;
	}
	spin_unlock(&nv_hold_lock);
	if (!arm)
		wake_up_all(&nv_hold_wq);
	return ret;
}

static ssize_t nv_hold_write(struct file *file, const char __user *ubuf,
			     size_t count, loff_t *ppos)
{
	char cmd[64], *argv[3];
	int argc, ret = -EINVAL;

	argc = standin_ctl_words(cmd, sizeof(cmd), ubuf, count, argv, ARRAY_SIZE(argv));
	if (argc < 0)
		return argc;
	if (argc == 2 && !strcmp(argv[0], "hold"))
		ret = nv_hold_set(argv[1], true);
	else if (argc == 2 && !strcmp(argv[0], "release"))
		ret = nv_hold_set(argv[1], false);
	return ret ? ret : count;
}

static int nv_hold_show(struct seq_file *m, void *v)
{
	unsigned int i, c;

	spin_lock(&nv_hold_lock);
	for (i = 0; i < NV_STANDIN_HOLD_COUNT; i++) {
		const char *sep = "";

		seq_printf(m, "%s armed=%d parked=%u total=%lu cpus=", nv_hold_names[i],
			   nv_holds[i].armed, nv_holds[i].parked, nv_holds[i].total);
		for (c = 0; c < NV_HOLD_CPUS; c++) {
			if (!nv_holds[i].on_cpu[c])
				continue;
			seq_printf(m, "%s%u", sep, c);
			sep = ",";
		}
		seq_putc(m, '\n');
	}
	spin_unlock(&nv_hold_lock);
	return 0;
}

static int nv_hold_open(struct inode *inode, struct file *file)
{
	return single_open(file, nv_hold_show, NULL);
}

static const struct file_operations nv_hold_fops = {
	.owner = THIS_MODULE,
	.open = nv_hold_open,
	.read = seq_read,
	.write = nv_hold_write,
	.llseek = seq_lseek,
	.release = single_release,
};

/* ------------------------------------------------------------------ */
/* /proc/driver/nvidia/version, as nv-procfs.c prints it */

static int nv_procfs_read_version(struct seq_file *s, void *v)
{
	seq_printf(s, "NVRM version: %s\n", rm_standin_version_id());
	/* The real line carries "gcc -v"'s last line; the kernel's compiler here. */
	seq_printf(s, "GCC version:  %s\n", CONFIG_CC_VERSION_TEXT);
	return 0;
}

static int nv_cpu_type(const char *name)
{
	if (!strcmp(name, "ryzen"))
		return NV_STANDIN_CPU_RYZEN;
	if (!strcmp(name, "xeon_spr"))
		return NV_STANDIN_CPU_XEON_SPR;
	if (!strcmp(name, "other"))
		return NV_STANDIN_CPU_OTHER;
	return -EINVAL;
}

/* ------------------------------------------------------------------ */
/*
 * The GPUs' PCI functions.  On a real host each GPU is a PCI function with
 * NVIDIA's vendor ID and its chip's device ID, and p2p-shim reads them at
 * the address the attach names (its generation rule fails closed without
 * them: issue 41).  QEMU has no NVIDIA function, so at load, before the
 * GPUs attach, the stand-in gives each GPU address one:
 *
 *  - where QEMU put a device (tests/vm/cases-topo: endpoints below a switch
 *    or root ports), that device takes the chip's IDs until unload;
 *  - elsewhere a root bus of the stand-in's own (one per bus number) whose
 *    only functions are the GPUs', answering config reads with the IDs, a
 *    3D-controller class (not VGA: the VGA arbiter stays out of it), no
 *    BARs and no capabilities.  Removed at unload.
 *
 * The device IDs are of one board per chip, from the supported-GPU list in
 * open-gpu-kernel-modules' README (595.45.04).
 */
static const struct {
	const char *chip;
	u16 device;
} nv_pci_ids[] = {
	{ "GA102", 0x2204 },	/* RTX 3090 */
	{ "GA100", 0x20b0 },	/* A100-SXM4-40GB */
	{ "AD102", 0x2684 },	/* RTX 4090 */
	{ "AD104", 0x2782 },	/* RTX 4070 Ti */
	{ "GH100", 0x2331 },	/* H100 PCIe */
	{ "GB100", 0x2901 },	/* B200 */
	{ "GB202", 0x2b85 },	/* RTX 5090 */
	{ "GB203", 0x2c02 },	/* RTX 5080 */
};

#define NV_PCI_CLASS_3D		0x030200	/* display, 3D controller */

struct nv_pci_bus {
	struct pci_sysdata sd;	/* first: bus->sysdata points here (x86) */
	struct resource busn;
	struct pci_bus *bus;
	u16 device[256];	/* by devfn; 0: no function */
};

static struct {
	struct nv_pci_bus *bus[NV_STANDIN_MAX_GPUS];
	struct pci_dev *taken[NV_STANDIN_MAX_GPUS];	/* QEMU's, with its own IDs: */
	u16 vendor[NV_STANDIN_MAX_GPUS], device[NV_STANDIN_MAX_GPUS];
} nv_pci;

static u16 nv_pci_device_id(const char *chip)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(nv_pci_ids); i++)
		if (!strcmp(nv_pci_ids[i].chip, chip))
			return nv_pci_ids[i].device;
	return 0;
}

static int nv_pci_read(struct pci_bus *bus, unsigned int devfn, int where, int size, u32 *val)
{
	struct nv_pci_bus *nb = bus->sysdata;
	u16 device = nb->device[devfn & 0xff];
	u32 cfg[16] = {};	/* the header's dwords, as the config accessors return them */

	if (!device) {
		*val = ~0U;
		return PCIBIOS_DEVICE_NOT_FOUND;
	}
	cfg[PCI_VENDOR_ID / 4] = (u32)device << 16 | PCI_VENDOR_ID_NVIDIA;
	cfg[PCI_CLASS_REVISION / 4] = NV_PCI_CLASS_3D << 8 | 0xa1;
	cfg[PCI_SUBSYSTEM_VENDOR_ID / 4] = PCI_VENDOR_ID_NVIDIA;
	*val = 0;
	if (where >= 0 && where + size <= (int)sizeof(cfg)) {
		/* size is 1, 2 or 4 and where aligned to it: within one dword */
		*val = cfg[where / 4] >> (8 * (where % 4));
		if (size < 4)
			*val &= (1U << (8 * size)) - 1;
	}
	return PCIBIOS_SUCCESSFUL;
}

static int nv_pci_write(struct pci_bus *bus, unsigned int devfn, int where, int size, u32 val)
{
	return PCIBIOS_SUCCESSFUL;	/* no BARs, nothing to enable */
}

static struct pci_ops nv_pci_ops = {
	.read = nv_pci_read,
	.write = nv_pci_write,
};

static void nv_pci_remove(void)
{
	unsigned int i;

	for (i = 0; i < NV_STANDIN_MAX_GPUS; i++) {
		if (nv_pci.taken[i]) {
			nv_pci.taken[i]->vendor = nv_pci.vendor[i];
			nv_pci.taken[i]->device = nv_pci.device[i];
			pci_dev_put(nv_pci.taken[i]);
			nv_pci.taken[i] = NULL;
		}
		if (nv_pci.bus[i]) {
			pci_lock_rescan_remove();
			pci_stop_root_bus(nv_pci.bus[i]->bus);
			pci_remove_root_bus(nv_pci.bus[i]->bus);
			pci_unlock_rescan_remove();
			kfree(nv_pci.bus[i]);
			nv_pci.bus[i] = NULL;
		}
	}
}

/* A root bus of ours for @g's bus number, made or found; NULL on failure. */
static struct nv_pci_bus *nv_pci_bus_of(const struct nv_standin_gpu_desc *g)
{
	struct nv_pci_bus *nb;
	LIST_HEAD(res);
	unsigned int i;

	for (i = 0; i < NV_STANDIN_MAX_GPUS && nv_pci.bus[i]; i++)
		if (nv_pci.bus[i]->sd.domain == g->domain && nv_pci.bus[i]->bus->number == g->bus)
			return nv_pci.bus[i];
	if (i == NV_STANDIN_MAX_GPUS || pci_find_bus(g->domain, g->bus))
		return NULL;	/* QEMU's bus, with no device at the GPU's slot */
	nb = kzalloc(sizeof(*nb), GFP_KERNEL);
	if (!nb)
		return NULL;
	nb->sd.domain = g->domain;
	nb->sd.node = NUMA_NO_NODE;
	nb->busn = (struct resource)DEFINE_RES_NAMED(g->bus, 1, "nvidia-standin", IORESOURCE_BUS);
	pci_add_resource(&res, &nb->busn);
	pci_lock_rescan_remove();
	nb->bus = pci_create_root_bus(NULL, g->bus, &nv_pci_ops, &nb->sd, &res);
	pci_unlock_rescan_remove();
	if (!nb->bus) {
		pci_free_resource_list(&res);
		kfree(nb);
		return NULL;
	}
	nv_pci.bus[i] = nb;
	return nb;
}

static int nv_pci_add(const struct nv_standin_config *cfg)
{
	const struct nv_standin_gpu_desc *g;
	struct nv_pci_bus *nb;
	struct pci_dev *pdev;
	unsigned int i, devfn;
	u16 device;

	for (i = 0; i < cfg->num_gpus; i++) {
		g = &cfg->gpu[i];
		device = nv_pci_device_id(g->chip);
		if (!device)
			continue;
		devfn = PCI_DEVFN(g->dev, g->fn);
		pdev = pci_get_domain_bus_and_slot(g->domain, g->bus, devfn);
		if (pdev) {
			nv_pci.taken[i] = pdev;
			nv_pci.vendor[i] = pdev->vendor;
			nv_pci.device[i] = pdev->device;
			pdev->vendor = PCI_VENDOR_ID_NVIDIA;
			pdev->device = device;
			continue;
		}
		nb = nv_pci_bus_of(g);
		if (!nb) {
			pr_err("NVRM: standin: no PCI function can be made at %04x:%02x:%02x.%x\n",
			       g->domain, g->bus, g->dev, g->fn);
			goto fail;
		}
		nb->device[devfn] = device;
	}
	for (i = 0; i < NV_STANDIN_MAX_GPUS; i++) {
		if (!nv_pci.bus[i])
			continue;
		pci_lock_rescan_remove();
		pci_scan_child_bus(nv_pci.bus[i]->bus);
		pci_bus_add_devices(nv_pci.bus[i]->bus);
		pci_unlock_rescan_remove();
	}
	return 0;
fail:
	nv_pci_remove();
	return -ENODEV;
}

static int __init nvidia_init_module(void)
{
	struct nv_standin_config *cfg;
	int ret;

	cfg = kzalloc(sizeof(*cfg), GFP_KERNEL);
	if (!cfg)
		return -ENOMEM;
	cfg->fail_gh100 = fail_gh100;
	cfg->unload_destroys = unload_destroys;
	cfg->cpu_type = nv_cpu_type(cpu);
	ret = cfg->cpu_type < 0 ? -EINVAL : nv_parse_gpus(cfg);
	if (!ret)
		ret = nv_parse_nvlink(cfg);
	if (!ret) {
		ret = nv_parse_registry(NVreg_RegistryDwords);
		if (ret)
			pr_err("NVRM: bad NVreg_RegistryDwords '%s'\n",
			       NVreg_RegistryDwords);
	}
	if (!ret) {
		ret = nv_parse_registry_per_device(cfg, NVreg_RegistryDwordsPerDevice);
		if (ret)
			pr_err("NVRM: bad NVreg_RegistryDwordsPerDevice '%s'\n",
			       NVreg_RegistryDwordsPerDevice);
	}
	if (ret)
		goto out;

	pr_info("NVRM: loading %s\n", rm_standin_version_id());
	ret = nv_pci_add(cfg);
	if (ret)
		goto out;
	ret = rm_standin_init(cfg);
	if (ret) {
		nv_pci_remove();
		goto out;
	}

	nv_proc_dir = proc_mkdir("driver/nvidia", NULL);
	if (nv_proc_dir)
		proc_create_single("version", 0444, nv_proc_dir,
				   nv_procfs_read_version);

	nv_standin_debugfs = debugfs_create_dir("nvidia-standin", NULL);
	debugfs_create_file("ctl", 0600, nv_standin_debugfs, NULL, &nv_ctl_fops);
	debugfs_create_file("state", 0444, nv_standin_debugfs, NULL,
			    &nv_state_fops);
	debugfs_create_file("stubs", 0444, nv_standin_debugfs, NULL,
			    &nv_stubs_fops);
	debugfs_create_file("registry", 0600, nv_standin_debugfs, NULL,
			    &nv_registry_fops);
	debugfs_create_file("hold", 0600, nv_standin_debugfs, NULL, &nv_hold_fops);
out:
	kfree(cfg);
	return ret;
}

static void __exit nvidia_exit_module(void)
{
	/* Nothing is parked here: a parked call holds a file of ours open. */
	nv_hold_set("all", false);
	debugfs_remove_recursive(nv_standin_debugfs);
	if (nv_proc_dir)
		proc_remove(nv_proc_dir);
	rm_standin_shutdown();
	nv_pci_remove();
}

module_init(nvidia_init_module);
module_exit(nvidia_exit_module);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Stand-in for NVIDIA's nvidia.ko, for p2p-shim tests");
MODULE_VERSION(NV_STANDIN_VERSION);
