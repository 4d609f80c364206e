// SPDX-License-Identifier: MIT
/* Labels from cgroup paths (src/agent/cg_labels.c), on the paths systemd,
 * docker, podman, the kubelet (both cgroup drivers) and Slurm make. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>
#include "cg_labels.h"

#define ID "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define UID "6b9e7f0c-1d2e-4f3a-8b5c-0d1e2f3a4b5c"
#define UID_ "6b9e7f0c_1d2e_4f3a_8b5c_0d1e2f3a4b5c"

static void test_systemd_unit(void **state)
{
	struct cg_labels l;

	(void)state;
	cg_labels_parse("/system.slice/nginx.service", &l);
	assert_string_equal(l.unit, "nginx.service");
	assert_string_equal(l.slice, "system.slice");
	assert_string_equal(l.container_id, "");
	cg_labels_parse("/user.slice/user-1000.slice/session-3.scope", &l);
	assert_string_equal(l.unit, "session-3.scope");
	assert_string_equal(l.slice, "user-1000.slice");
}

static void test_docker_and_podman(void **state)
{
	struct cg_labels l;

	(void)state;
	cg_labels_parse("/system.slice/docker-" ID ".scope", &l);
	assert_string_equal(l.runtime, "docker");
	assert_string_equal(l.container_id, ID);
	cg_labels_parse("/docker/" ID, &l);
	assert_string_equal(l.runtime, "docker");
	assert_string_equal(l.container_id, ID);
	cg_labels_parse("/machine.slice/libpod-" ID ".scope/container", &l);
	assert_string_equal(l.runtime, "podman");
	assert_string_equal(l.container_id, ID);
	cg_labels_parse("/libpod_parent/libpod-" ID, &l);
	assert_string_equal(l.runtime, "podman");
	/* Not an id: 63 digits, or upper case. */
	cg_labels_parse("/docker-" "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde" ".scope", &l);
	assert_string_equal(l.container_id, "");
	cg_labels_parse("/docker/0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef", &l);
	assert_string_equal(l.container_id, "");
}

static void test_kubepods(void **state)
{
	struct cg_labels l;

	(void)state;
	/* systemd driver */
	cg_labels_parse("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_
			".slice/cri-containerd-" ID ".scope", &l);
	assert_string_equal(l.pod_uid, UID);
	assert_string_equal(l.qos, "burstable");
	assert_string_equal(l.runtime, "containerd");
	assert_string_equal(l.container_id, ID);
	/* cgroupfs driver; guaranteed pods sit directly under kubepods */
	cg_labels_parse("/kubepods/besteffort/pod" UID "/" ID, &l);
	assert_string_equal(l.pod_uid, UID);
	assert_string_equal(l.qos, "besteffort");
	assert_string_equal(l.container_id, ID);
	cg_labels_parse("/kubepods.slice/kubepods-pod" UID_ ".slice/crio-" ID ".scope", &l);
	assert_string_equal(l.pod_uid, UID);
	assert_string_equal(l.runtime, "crio");
	assert_string_equal(l.qos, "");
	/* the pod level alone */
	cg_labels_parse("/kubepods/burstable/pod" UID, &l);
	assert_string_equal(l.pod_uid, UID);
	assert_string_equal(l.container_id, "");
	/* a malformed uid is not one */
	cg_labels_parse("/kubepods/burstable/pod1234", &l);
	assert_string_equal(l.pod_uid, "");
}

static void test_slurm(void **state)
{
	struct cg_labels l;

	(void)state;
	cg_labels_parse("/system.slice/slurmstepd.scope/job_4242/step_0/user/task_0", &l);
	assert_string_equal(l.slurm_job, "4242");
	assert_string_equal(l.slurm_step, "0");
	assert_string_equal(l.unit, "slurmstepd.scope");
	cg_labels_parse("/slurm/uid_1000/job_77/step_batch", &l);
	assert_string_equal(l.slurm_job, "77");
	assert_string_equal(l.slurm_step, "batch");
	cg_labels_parse("/job_x1/step_0", &l);
	assert_string_equal(l.slurm_job, "");
	assert_string_equal(l.slurm_step, "");
}

static void test_odd_paths(void **state)
{
	struct cg_labels l;
	char longp[600];

	(void)state;
	cg_labels_parse("/", &l);
	assert_string_equal(l.unit, "");
	cg_labels_parse("", &l);
	cg_labels_parse("//a//b.service/", &l);
	assert_string_equal(l.unit, "b.service");
	memset(longp, 'x', sizeof(longp) - 9);
	memcpy(longp + sizeof(longp) - 9, ".service", 9);
	cg_labels_parse(longp, &l);
	assert_int_equal(strlen(l.unit), CG_LABEL_LEN - 1);     /* cut, never overrun */
	for (size_t i = 0; cg_label_name(i); i++)
		assert_non_null(cg_label_value(&l, i));
	assert_null(cg_label_value(&l, 99));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_systemd_unit),
		cmocka_unit_test(test_docker_and_podman),
		cmocka_unit_test(test_kubepods),
		cmocka_unit_test(test_slurm),
		cmocka_unit_test(test_odd_paths),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
