// SPDX-License-Identifier: GPL-2.0
/*
 * The profiles: what p2p-shim hooks in each driver generation, and the
 * rules that recognise a target.  Compiled into the module and, unchanged,
 * into libp2pshim for `p2pctl check`; so no kernel-only calls here.
 *
 * docs/hooks.md gives the evidence per driver tag for every entry.
 */
#include <p2p-shim/ruleenv.h>

#include <p2p-shim/profile.h>

/*
 * What each hook does on top of its kind: its action, which `p2pctl check`
 * reads too.  In the module, the policy that owns the action gives the
 * handlers (kmod/policy.c: p2ps_policies_ops()); the profile names none.
 */
#define ACT(A)	.action = P2PS_ACT_##A

#define CODE(t, ...) { \
	.op = { __VA_ARGS__ }, \
	.len = sizeof((unsigned short[]){ __VA_ARGS__ }) / sizeof(unsigned short), \
	.text = t, \
}

/* The NVOC stub bodies seen in every tag from 565 to 595. */
static const struct p2ps_code ret_not_supported =	/* return NV_ERR_NOT_SUPPORTED */
	CODE("mov $0x56,%eax; ret", 0xb8, 0x56, 0x00, 0x00, 0x00, P2PS_CODE_RET);
static const struct p2ps_code ret_false =		/* return NV_FALSE */
	CODE("xor %eax,%eax; ret", 0x31, 0xc0, P2PS_CODE_RET);
static const struct p2ps_code ret_void =		/* return */
	CODE("ret", P2PS_CODE_RET);

#define STUB_TO_GH100(fn, body, A, reason) {		\
	.target = #fn, .flags = P2PS_T_STUB, .expect = &(body),	\
	.kind = P2PS_HOOK_REDIRECT, .dest = #fn "_GH100",	\
	ACT(A), .why = reason,				\
}

/*
 * The BAR1 P2P HAL slots and the PCIE_BAR1 routing: the same in every
 * generation served, 550 to 595 (docs/hooks.md has the evidence per tag).
 * Gen 0 wraps the mapping-supported check and reads the older caps
 * prototype, hence the two parameters.
 */
#define BAR1_P2P_HOOKS BAR1_P2P_HOOKS_WITH(NONE, CAPS_GUARD)

#define BAR1_P2P_HOOKS_WITH(IS_SUPPORTED, CAPS) \
	STUB_TO_GH100(kbusIsPcieBar1P2PMappingSupported, ret_false, IS_SUPPORTED, \
		      "lets the caps check and BAR1 mapping see static BAR1 on both GPUs"), \
	STUB_TO_GH100(kbusHasPcieBar1P2PMapping, ret_false, NONE, \
		      "makes peer mappings (RM and UVM) take the BAR1 path"), \
	STUB_TO_GH100(kbusCreateP2PMappingForBar1P2P, ret_not_supported, LEDGER_CREATE, \
		      "creates the BAR1 P2P pair: refcounts and IOMMU mapping of the peer BAR1"), \
	STUB_TO_GH100(kbusRemoveP2PMappingForBar1P2P, ret_not_supported, LEDGER_REMOVE, \
		      "tears the pair down; without it the IOMMU mappings leak"), \
	STUB_TO_GH100(kbusGetBar1P2PDmaInfo, ret_not_supported, NONE, \
		      "gives the peer BAR1 DMA base that SYS_NONCOH peer PTEs point at"), \
	STUB_TO_GH100(dmaAllocBar1P2PMapping, ret_not_supported, LEDGER_DMA_MAP, \
		      "maps peer memory into a GPU VA space through the peer's BAR1"), \
	STUB_TO_GH100(dmaFreeBar1P2PMapping, ret_void, LEDGER_DMA_UNMAP, \
		      "releases that BAR1 window; the stub would leak it"), \
	{ \
		.target = "kbusCreateP2PMapping_GP100", \
		.kind = P2PS_HOOK_REDIRECT, \
		.dest = "kbusCreateP2PMapping_GH100", \
		ACT(ROUTE_BAR1), \
		.why = "routes connection type PCIE_BAR1 (only) to the BAR1 path on pre-Hopper chips", \
	}, \
	{ \
		.target = "kbusRemoveP2PMapping_GP100", \
		.kind = P2PS_HOOK_REDIRECT, \
		.dest = "kbusRemoveP2PMapping_GH100", \
		ACT(ROUTE_BAR1), \
		.why = "routes PCIE_BAR1 teardown the same way", \
	}, \
	{ \
		.target = "osReadRegistryDword", \
		.kind = P2PS_HOOK_RETURN, \
		ACT(REGISTRY_DEFAULTS), \
		.why = "supplies the profile's registry keys where the user set none", \
	}, \
	{ \
		.target = "p2pGetCapsStatus", \
		.kind = P2PS_HOOK_RETURN, \
		ACT(CAPS), \
		.why = "never lets the forced caps select the mailbox path GeForce chips lack", \
	}, \
	{ \
		.target = "gpumgrAttachGpu", \
		.kind = P2PS_HOOK_RETURN, \
		ACT(GPU_ATTACH), \
		.why = "observes a GPU's attach: ties its instance to the OBJGPU reading ForceP2P", \
	}, \
	{ \
		.target = "gpumgrDetachGpu", \
		.kind = P2PS_HOOK_RETURN, \
		ACT(GPU_DETACH), \
		.why = "observes a GPU's detach: its OBJGPU and settings go with it", \
	}, \
	{ \
		.target = "osDpcDetachGpu", \
		.kind = P2PS_HOOK_ARG, \
		ACT(GPU_LEAVING), \
		.why = "names the OBJGPU a detach frees, also of a GPU attached before arming", \
	}

/*
 * 565+: the per-GPU static BAR1 decision (kmod/static_bar1.c, docs/cards.md).
 * kbusInitBar1_GM107 asks kbusIsStaticBar1Supported_TU102 (with the
 * console and mailbox sizes from 570) and calls
 * kbusEnableStaticBar1Mapping_TU102, which maps what
 * memmgrGetClientFbAddrSpaceSize_IMPL says (only the static BAR1 code
 * calls it).  Observed everywhere; where the rule says no but the client
 * FB fits, the "no" becomes "yes" (570+), and a forced enable that cannot
 * map is turned into "no static BAR1", never into a failed GPU init.
 */
#define STATIC_BAR1_HOOKS \
	{ \
		.target = "kbusIsStaticBar1Supported_TU102", \
		.kind = P2PS_HOOK_RETURN, \
		ACT(STATIC_DECIDE), \
		.why = "the per-GPU static BAR1 decision: observed, and \"no\" becomes \"yes\" where VRAM fits", \
	}, \
	{ \
		.target = "memmgrGetClientFbAddrSpaceSize_IMPL", \
		.kind = P2PS_HOOK_RETURN, \
		ACT(CLIENT_FB), \
		.why = "the client FB a forced static BAR1 maps: checked against BAR1 before it is mapped", \
	}, \
	{ \
		.target = "kbusEnableStaticBar1Mapping_TU102", \
		.kind = P2PS_HOOK_RETURN, \
		ACT(STATIC_BAR1), \
		.why = "observes which GPUs got static BAR1; a forced one that fails to map is left off", \
	}, \
	{ \
		.target = "kbusDisableStaticBar1Mapping_TU102", \
		.kind = P2PS_HOOK_RETURN, \
		ACT(STATIC_BAR1_OFF), \
		.why = "observes static BAR1 going away while the GPU stays attached (persistence mode)", \
	}

/*
 * BAR1 pairs the driver creates with its own _GH100 slots (GB20x from
 * 570.86.15, Hopper, GB10x) while one of their GPUs carries our ForceP2P:
 * return probes on those bodies see them, and leave the calls that come
 * from our wrappers to them.  Gen A's external-mapping fix and, before
 * 590, nvidia-uvm's peer tags (kmod/uvm_peer.c) need these pairs too.
 */
#define NATIVE_PAIR_HOOKS \
	{ \
		.target = "kbusCreateP2PMappingForBar1P2P_GH100", \
		.kind = P2PS_HOOK_RETURN, \
		ACT(NATIVE_CREATE), \
		.why = "observes BAR1 pairs the driver makes without the stub wrappers (GB20x " \
		       "from 570, Hopper, GB10x): the UVM fixes cover them too", \
	}, \
	{ \
		.target = "kbusRemoveP2PMappingForBar1P2P_GH100", \
		.kind = P2PS_HOOK_RETURN, \
		ACT(NATIVE_REMOVE), \
		.why = "observes those pairs' teardown", \
	}

/*
 * Gen B, 580.x to 595.x: the driver has the BAR1 P2P implementation (for
 * Hopper and Blackwell) and its UVM side encodes BAR1 peers as SYS_NONCOH;
 * GeForce chips only lack the HAL slots and the routing.
 */
static const struct p2ps_hook_desc gen_b_hooks[] = {
	BAR1_P2P_HOOKS,
	STATIC_BAR1_HOOKS,
	NATIVE_PAIR_HOOKS,
};

/*
 * Gen A, 565.x to 575.x: the same, and the UVM external mapping code knows
 * only the PEER aperture, which GeForce chips cannot use for BAR1 peers.
 * Within a PTE build for a BAR1 pair (and only there), the aperture becomes
 * SYS_NONCOH and the address the peer's BAR1 DMA base plus the offset.
 * A BAR1 pair is one the wrappers created (stub chips) or one the driver
 * created with its own _GH100 slots (NATIVE_PAIR_HOOKS).
 */
#define GEN_A_HOOKS GEN_A_HOOKS_WITH(BAR1_P2P_HOOKS)

#define GEN_A_HOOKS_WITH(bar1_p2p_hooks) \
	bar1_p2p_hooks, \
	{ \
		.target = "nvGpuOpsBuildExternalAllocPtes", \
		.kind = P2PS_HOOK_RETURN, \
		ACT(UVM_SCOPE), \
		.why = "scopes the UVM fix to PTE builds for a BAR1 pair (mapping GPU, memory owner)", \
	}, \
	{ \
		.target = "nvGpuOpsGetExternalAllocAperture", \
		.kind = P2PS_HOOK_RETURN, \
		ACT(UVM_APERTURE), \
		.why = "in scope: PEER becomes SYS_NONCOH, so the sysmem address field is used", \
	}, \
	{ \
		.target = "kgmmuEncodePhysAddrs_IMPL", \
		.kind = P2PS_HOOK_ARG, \
		ACT(UVM_ENCODE), \
		.why = "in scope: encodes the addresses as peer addresses at the peer's BAR1 DMA base", \
	}, \
	NATIVE_PAIR_HOOKS

static const struct p2ps_hook_desc gen_a2_hooks[] = {
	GEN_A_HOOKS,
	STATIC_BAR1_HOOKS,
};

/*
 * 565 and 570 apply the ForceP2P override before asking the BAR1 HAL
 * whether both GPUs have static BAR1 (_kp2pCapsGetStatusOverPcieBar1), so
 * a pair without it would be reported PCIE_BAR1 OK and then fail to map.
 * The caps guard needs to know which GPUs did get static BAR1.
 */
static const struct p2ps_hook_desc gen_a1_hooks[] = {
	GEN_A_HOOKS,
	STATIC_BAR1_HOOKS,
};

/*
 * Gen 0, 550.x and 560.x: as gen A, and static BAR1, which these drivers
 * decide and set up through HAL slots that are stubs on every chip but
 * GH100: kbusIsBar1P2PCapable (at BAR1 initialisation),
 * kbusEnableStaticBar1Mapping, kbusDisableStaticBar1Mapping,
 * kbusGetStaticFbAperture.  The _GH100 bodies are generic: BAR1 against
 * VRAM plus 128 KiB and RMForceP2PType=2, one 2 MiB-page BAR1 mapping of
 * all VRAM at BAR1 offset 0.  Once static BAR1 is on, these drivers also
 * route every BAR1 mapping of video memory (contiguous memory only) and
 * every compressed allocation (kbusUpdateStaticBar1VAMapping: a stub)
 * through static-BAR1 code only Hopper has; so, for a GPU whose static
 * BAR1 came from these hooks, kbusIsStaticBar1Enabled says yes only inside
 * the BAR1 P2P wrappers (mapping-supported check, BAR1 window map and
 * unmap) and no everywhere else, which keeps everything else on dynamic
 * BAR1 mappings.  The community patch did that much by commenting out the
 * static branch of _kbusMapAperture_GM107.  p2pGetCapsStatus has no
 * atomics argument before 565; the caps guard reads the 4 arguments.
 */
static const struct p2ps_hook_desc gen_0_hooks[] = {
	GEN_A_HOOKS_WITH(BAR1_P2P_HOOKS_WITH(VIEW_IS_SUPPORTED, CAPS_GUARD_V1)),
	STUB_TO_GH100(kbusIsBar1P2PCapable, ret_false, BAR1_CAPABLE,
		      "BAR1 initialisation asks it: _GH100 says yes with RMForceP2PType=2 "
		      "when BAR1 holds all VRAM plus 128 KiB"),
	STUB_TO_GH100(kbusEnableStaticBar1Mapping, ret_not_supported, STATIC_ENABLE,
		      "maps all VRAM through BAR1 (static BAR1), which BAR1 P2P needs"),
	STUB_TO_GH100(kbusDisableStaticBar1Mapping, ret_void, STATIC_DISABLE,
		      "tears the static BAR1 mapping down with BAR1; the stub would leak it"),
	STUB_TO_GH100(kbusGetStaticFbAperture, ret_not_supported, NONE,
		      "gives the static BAR1 offset of peer memory mapped for BAR1 P2P"),
	{
		.target = "kbusEnableStaticBar1Mapping_GH100",
		.kind = P2PS_HOOK_RETURN,
		ACT(STATIC_BAR1),
		.why = "observes which GPUs got static BAR1 (Hopper natively, the others "
		       "through the hooks): the caps guard refuses BAR1 P2P without it",
	},
	{
		.target = "kbusIsStaticBar1Enabled_IMPL",
		.kind = P2PS_HOOK_RETURN,
		ACT(STATIC_VIEW),
		.why = "static BAR1 from these hooks is seen by the BAR1 P2P code only",
	},
};

/*
 * Besides the wrappers' destinations, the module calls only this: a HAL
 * body, reached through the driver's NVOC tables, so it keeps its ENDBR.
 * Nothing of the GPU manager: see kmod/gpus.c.
 */
static const char *const calls[] = {
	"kbusGetBar1P2PDmaInfo_GH100",
	NULL,
};

/*
 * Registry keys: GeForce PCIe caps come back NOT_SUPPORTED from GSP unless
 * ForceP2P overrides them (0x211: reads and writes on, atomics left to the
 * driver; 0x11 would disable them).  The caps check takes the BAR1 route
 * only for the P2P type its generation wants: RMForceP2PType=2 (BAR1P2P)
 * in 565-570, RMPcieP2PType=1 (BAR1) from 575 (where RMForceP2PType=2
 * means NVLink).  575 also needs static BAR1, off by default there;
 * RMForceStaticBar1=2 (auto) turns it on only where BAR1 holds VRAM.
 * Never 1 (force): it fails GPU initialisation when BAR1 is too small.
 */
/*
 * 550 and 560 have neither RMPcieP2PType nor RMForceStaticBar1: static BAR1
 * follows RMForceP2PType=2 there (kbusIsBar1P2PCapable_GH100).  ForceP2P
 * has no atomics field before 565; 0x211 reads as reads and writes on.
 */
static const struct p2ps_registry_default gen_0_registry[] = {
	{ "ForceP2P", 0x211 },
	{ "RMForceP2PType", 2 },
	{ NULL, 0 },
};

static const struct p2ps_registry_default gen_a1_registry[] = {
	{ "ForceP2P", 0x211 },
	{ "RMForceP2PType", 2 },
	{ NULL, 0 },
};

static const struct p2ps_registry_default gen_a2_registry[] = {
	{ "ForceP2P", 0x211 },
	{ "RMPcieP2PType", 1 },
	{ "RMForceStaticBar1", 2 },
	{ NULL, 0 },
};

static const struct p2ps_registry_default gen_b_registry[] = {
	{ "ForceP2P", 0x211 },
	{ "RMPcieP2PType", 1 },
	{ NULL, 0 },
};

static const unsigned int gen_0_majors[] = { 550, 560, 0 };
static const unsigned int gen_a1_majors[] = { 565, 570, 0 };
static const unsigned int gen_a2_majors[] = { 575, 0 };
static const unsigned int gen_b_majors[] = { 580, 590, 595, 0 };

#define NR(a) (sizeof(a) / sizeof((a)[0]))

/*
 * The UVM peer set (docs/uvm.md, section 3.4), 550 to 580: for a BAR1
 * pair, RM reports peer ids 0xffffffff, which nvidia-uvm keeps as NvU8
 * 0xff and turns into UVM_APERTURE_PEER(0xff): make_pte_* encode it as
 * VIDEO (the accessing GPU's own memory), copies as PEERMEM with peer id
 * 7.  The set gives each direction of a pair of ours a tag (0x80..0xfe)
 * instead and turns the tag into SYS at the peer's BAR1 DMA base where
 * nvidia-uvm hands out peer addresses.  590 and later know BAR1 pairs
 * but not how to encode them on Ampere and Ada: uvm-bar1, below.
 */
#define UVM_PEER_CAPS_HOOK {						\
	.target = "nvUvmInterfaceGetP2PCaps",				\
	.kind = P2PS_HOOK_RETURN,					\
	ACT(UVM_PEER_CAPS),				\
	.why = "gives each direction of a BAR1 pair of ours a tagged peer id for nvidia-uvm", \
}

#define UVM_PEER_PTE_HOOKS						\
	{								\
		.target = "make_pte_turing",				\
		.flags = P2PS_T_UVM,					\
		.kind = P2PS_HOOK_ARG,					\
		ACT(UVM_PEER_PTE),			\
		.why = "a tag left in a PTE build (identity mapping) becomes SYS at the BAR1 base", \
	},								\
	{								\
		.target = "make_pte_hopper",				\
		.flags = P2PS_T_UVM,					\
		.kind = P2PS_HOOK_ARG,					\
		ACT(UVM_PEER_PTE),			\
		.why = "the same for Hopper and Blackwell PTEs",	\
	}

/*
 * 550-565 keep the peer addresses in uvm_pmm_gpu.c, where a compiler may
 * inline uvm_pmm_gpu_peer_phys_address into uvm_pmm_gpu_peer_copy_address
 * (gcc 12 does, for 565.57.01): the copy address is hooked as well.
 */
static const struct p2ps_hook_desc uvm_pmm_hooks[] = {
	UVM_PEER_CAPS_HOOK,
	{
		.target = "uvm_pmm_gpu_peer_phys_address",
		.flags = P2PS_T_UVM,
		.kind = P2PS_HOOK_RETURN,
		ACT(UVM_PEER_ADDRESS),
		.why = "a tagged peer address becomes SYS at the BAR1 base (managed PTEs, CE copies)",
	},
	UVM_PEER_PTE_HOOKS,
	{
		.target = "uvm_pmm_gpu_peer_copy_address",
		.flags = P2PS_T_UVM,
		.kind = P2PS_HOOK_RETURN,
		ACT(UVM_PEER_COPY),
		.why = "the same for a physical copy address, where the phys-address call is inlined",
	},
};

static const struct p2ps_hook_desc uvm_gpu_hooks[] = {
	UVM_PEER_CAPS_HOOK,
	{
		.target = "uvm_gpu_peer_phys_address",
		.flags = P2PS_T_UVM,
		.kind = P2PS_HOOK_RETURN,
		ACT(UVM_PEER_ADDRESS),
		.why = "a tagged peer address becomes SYS at the BAR1 base (managed PTEs, CE copies)",
	},
	UVM_PEER_PTE_HOOKS,
};

/*
 * 590 and later know BAR1 pairs (UVM_LINK_TYPE_PCIE_BAR1) and add the BAR1
 * base themselves, but choose SYS_NON_COHERENT when the owner takes no PCIe
 * atomics (before Blackwell), which make_pte_turing and Ampere's
 * ce_aperture cannot encode: Ampere and Ada pairs (ours: Hopper and GB20x
 * have native BAR1 slots, the ledger never sees them) get SYS instead.
 */
static const struct p2ps_hook_desc uvm_bar1_hooks[] = {
	{
		.target = "nvUvmInterfaceGetP2PCaps",
		.kind = P2PS_HOOK_RETURN,
		ACT(UVM_PEER_ATOMICS),
		.why = "a BAR1 pair of ours gets bar1PcieAtomics, so nvidia-uvm picks SYS, which "
		       "Ampere and Ada PTEs can encode (no atomics are sent: PTEs keep ATOMIC_DISABLE)",
	},
};

static const unsigned int uvm_pmm_majors[] = { 550, 560, 565, 0 };
static const unsigned int uvm_gpu_majors[] = { 570, 575, 580, 0 };
static const unsigned int uvm_bar1_majors[] = { 590, 595, 0 };

#define NVIDIA_OBJECT(h) {						\
	.module = "nvidia",						\
	.hooks = h,							\
	.nr_hooks = NR(h),						\
	.calls = calls,							\
}

#define UVM_PMM_OBJECT {						\
	.module = "nvidia_uvm",						\
	.name = "uvm-pmm",						\
	.majors = uvm_pmm_majors,					\
	.hooks = uvm_pmm_hooks,						\
	.nr_hooks = NR(uvm_pmm_hooks),					\
	.copy_fn = "uvm_pmm_gpu_peer_copy_address",			\
}

#define UVM_GPU_OBJECT {						\
	.module = "nvidia_uvm",						\
	.name = "uvm-gpu",						\
	.majors = uvm_gpu_majors,					\
	.hooks = uvm_gpu_hooks,						\
	.nr_hooks = NR(uvm_gpu_hooks),					\
	.copy_fn = "uvm_gpu_peer_copy_address",				\
}

#define UVM_BAR1_OBJECT {						\
	.module = "nvidia_uvm",						\
	.name = "uvm-bar1",						\
	.majors = uvm_bar1_majors,					\
	.hooks = uvm_bar1_hooks,					\
	.nr_hooks = NR(uvm_bar1_hooks),					\
}

/* Each profile's objects: nvidia's, then nvidia-uvm's per major. */
static const struct p2ps_object gen_0_objects[] = {
	NVIDIA_OBJECT(gen_0_hooks), UVM_PMM_OBJECT, { NULL },
};
static const struct p2ps_object gen_a1_objects[] = {
	NVIDIA_OBJECT(gen_a1_hooks), UVM_PMM_OBJECT, UVM_GPU_OBJECT, { NULL },
};
static const struct p2ps_object gen_a2_objects[] = {
	NVIDIA_OBJECT(gen_a2_hooks), UVM_GPU_OBJECT, { NULL },
};
static const struct p2ps_object gen_b_objects[] = {
	NVIDIA_OBJECT(gen_b_hooks), UVM_GPU_OBJECT, UVM_BAR1_OBJECT, { NULL },
};

static bool serves(const unsigned int *majors, unsigned int major)
{
	for (; *majors; majors++)
		if (*majors == major)
			return true;
	return false;
}

const struct p2ps_object *p2ps_profile_object(const struct p2ps_profile *profile,
					      const char *version, const char *module)
{
	unsigned int major = p2ps_driver_major(version);
	const struct p2ps_object *o;

	if (!profile || !major)
		return NULL;
	for (o = profile->objects; o->module; o++)
		if (!strcmp(o->module, module) && (!o->majors || serves(o->majors, major)))
			return o;
	return NULL;
}

bool p2ps_is_object_module(const char *module)
{
	const struct p2ps_object *o;
	unsigned int i;

	for (i = 0; i < p2ps_nr_profiles; i++)
		for (o = p2ps_profiles[i].objects; o->module; o++)
			if (!strcmp(o->module, module))
				return true;
	return false;
}

bool p2ps_uvm_native_bar1(const char *version)
{
	return p2ps_driver_major(version) >= 590;
}

/* Oldest first: the last one is what --force uses for an unknown version. */
const struct p2ps_profile p2ps_profiles[] = {
	{
		.name = "gen-0",
		.versions = "550.x, 560.x",
		.majors = gen_0_majors,
		.objects = gen_0_objects,
		.registry = gen_0_registry,
		.force_before_bar1_check = true,
	},
	{
		.name = "gen-a1",
		.versions = "565.x, 570.x",
		.majors = gen_a1_majors,
		.objects = gen_a1_objects,
		.registry = gen_a1_registry,
		.force_before_bar1_check = true,
	},
	{
		.name = "gen-a2",
		.versions = "575.x",
		.majors = gen_a2_majors,
		.objects = gen_a2_objects,
		.registry = gen_a2_registry,
	},
	{
		.name = "gen-b",
		.versions = "580.x, 590.x, 595.x",
		.majors = gen_b_majors,
		.objects = gen_b_objects,
		.registry = gen_b_registry,
	},
};

const unsigned int p2ps_nr_profiles = NR(p2ps_profiles);

/* Parse one decimal component; returns the rest or NULL. */
static const char *parse_component(const char *s, unsigned int *out)
{
	unsigned long v = 0;

	if (!isdigit((unsigned char)*s))
		return NULL;
	while (isdigit((unsigned char)*s)) {
		v = v * 10 + (unsigned long)(*s++ - '0');
		if (v > 99999)
			return NULL;
	}
	*out = (unsigned int)v;
	return s;
}

int p2ps_parse_version(const char *version, unsigned int *major,
		       unsigned int *minor, unsigned int *patch)
{
	const char *s = version;

	*patch = 0;
	s = parse_component(s, major);
	if (!s || *s++ != '.')
		return -1;
	s = parse_component(s, minor);
	if (!s)
		return -1;
	if (*s == '.') {
		s = parse_component(s + 1, patch);
		if (!s)
			return -1;
	}
	return *s ? -1 : 0;
}

unsigned int p2ps_driver_major(const char *version)
{
	unsigned int major, minor, patch;

	if (!version || p2ps_parse_version(version, &major, &minor, &patch))
		return 0;
	return major;
}

const struct p2ps_profile *p2ps_profile_for_version(const char *version)
{
	unsigned int major = p2ps_driver_major(version), i;
	const unsigned int *m;

	if (!major)
		return NULL;
	for (i = 0; i < p2ps_nr_profiles; i++)
		for (m = p2ps_profiles[i].majors; *m; m++)
			if (*m == major)
				return &p2ps_profiles[i];
	return NULL;
}

const struct p2ps_profile *p2ps_profile_newest(void)
{
	return &p2ps_profiles[p2ps_nr_profiles - 1];
}

bool p2ps_is_stub_of(const char *sym, const char *base)
{
	size_t n = strlen(base);
	int i;

	if (strncmp(sym, base, n) || sym[n] != '_')
		return false;
	for (i = 1; i <= 6; i++)
		if (!isxdigit((unsigned char)sym[n + i]) || isupper((unsigned char)sym[n + i]))
			return false;
	return sym[n + 7] == '\0';
}

/* Length of an entry prefix at @p: endbr64, or a 5-byte nop or call (ftrace). */
static size_t entry_prefix(const unsigned char *p, size_t len)
{
	static const unsigned char nop5[] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };

	if (len >= 4 && p2ps_has_endbr(p))
		return 4;
	if (len >= sizeof(nop5) && !memcmp(p, nop5, sizeof(nop5)))
		return sizeof(nop5);
	if (len >= 5 && p[0] == 0xe8)	/* call __fentry__ or its trampoline */
		return 5;
	return 0;
}

int p2ps_match_code(const unsigned char *text, size_t len,
		    const struct p2ps_code *expect, char *why, size_t whylen)
{
	size_t off = 0, step, i;
	unsigned int k;

	/* At most one endbr64 and one ftrace site, in that order. */
	for (k = 0; k < 2 && (step = entry_prefix(text + off, len - off)); k++)
		off += step;

	for (i = 0; i < expect->len; i++) {
		unsigned short op = expect->op[i];

		if (op == P2PS_CODE_RET) {
			/* ret, or jmp to the return thunk (RETHUNK builds) */
			if (off < len && text[off] == 0xc3)
				return 0;
			if (off + 5 <= len && text[off] == 0xe9)
				return 0;
			break;
		}
		if (off >= len || text[off] != op)
			break;
		off++;
	}
	if (why) {
		size_t n = 0, j;

		n += snprintf(why + n, whylen - n, "body is not '%s':", expect->text);
		for (j = 0; j < len && j < 12 && n < whylen; j++)
			n += snprintf(why + n, whylen - n, " %02x", text[j]);
	}
	return -1;
}

bool p2ps_is_clone_suffix(const char *suffix)
{
	static const char *const clones[] = {
		".isra.", ".constprop.", ".part.", ".clone.", ".lto_priv.",
	};
	unsigned int i;

	for (i = 0; i < sizeof(clones) / sizeof(clones[0]); i++)
		if (!strncmp(suffix, clones[i], strlen(clones[i])))
			return true;
	return false;
}

bool p2ps_action_calls_dest(enum p2ps_action action)
{
	return action == P2PS_ACT_LEDGER_CREATE || action == P2PS_ACT_LEDGER_REMOVE ||
	       action == P2PS_ACT_LEDGER_DMA_MAP || action == P2PS_ACT_LEDGER_DMA_UNMAP ||
	       action == P2PS_ACT_BAR1_CAPABLE || action == P2PS_ACT_STATIC_ENABLE ||
	       action == P2PS_ACT_STATIC_DISABLE || action == P2PS_ACT_VIEW_IS_SUPPORTED;
}

bool p2ps_has_endbr(const unsigned char *text)
{
	static const unsigned char endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa };

	return !memcmp(text, endbr64, sizeof(endbr64));
}

/*
 * On kernels with call-depth tracking (CONFIG_MITIGATION_CALL_DEPTH_TRACKING,
 * CONFIG_CALL_DEPTH_TRACKING before 6.9; active with retbleed=stuff) the
 * module loader rewrites every direct call in a module: the call goes to an accounting thunk written into the 16 bytes
 * of padding right before the callee, which then falls through into it
 * (arch/x86/kernel/callthunks.c, patch_dest(): pad = dest - template
 * size).  So a call reaches @target if its rel32 lands on @target, or,
 * with @thunks, inside the padding window just before it.
 */
bool p2ps_calls_target(const unsigned char *text, size_t len, unsigned long long addr,
		       unsigned long long target, bool thunks)
{
	size_t i;

	for (i = 0; i + 5 <= len; i++) {
		unsigned long long dest;
		int rel;

		if (text[i] != 0xe8)
			continue;
		rel = (int)((unsigned int)text[i + 1] | (unsigned int)text[i + 2] << 8 |
			    (unsigned int)text[i + 3] << 16 | (unsigned int)text[i + 4] << 24);
		dest = addr + i + 5 + (long long)rel;
		if (dest == target)
			return true;
		if (thunks && dest < target && target - dest <= P2PS_CALL_THUNK_WINDOW)
			return true;
	}
	return false;
}

const char *p2ps_unsupported_reason(const char *version)
{
	unsigned int major = p2ps_driver_major(version);

	if (!major)
		return NULL;
	if (major == 555)
		return "555.x is not verified: its nvGpuOpsBuildExternalAllocPtes and "
		       "dmaAllocBar1P2PMapping_GH100 differ from 550.x/560.x; use 550.x or 560.x";
	if (major < 550)
		return "drivers before 550.x have no static BAR1 support to build BAR1 P2P on";
	return NULL;
}

void p2ps_supported_versions(char *buf, size_t len)
{
	size_t n = 0;
	unsigned int i;
	const unsigned int *m;

	buf[0] = '\0';
	for (i = 0; i < p2ps_nr_profiles; i++)
		for (m = p2ps_profiles[i].majors; *m && n < len; m++)
			n += snprintf(buf + n, len - n, "%s%u.x", n ? ", " : "", *m);
}
