//go:build darwin && cgo

package memledger

/*
#include <stdint.h>
#include <sys/sysctl.h>
#include <mach/mach.h>
#include <mach/vm_page_size.h>

// orchard_task_memory reads this task's phys_footprint and resident size.
static int orchard_task_memory(uint64_t *footprint, uint64_t *resident) {
	task_vm_info_data_t info;
	mach_msg_type_number_t count = TASK_VM_INFO_COUNT;
	if (task_info(mach_task_self(), TASK_VM_INFO, (task_info_t)&info, &count) != KERN_SUCCESS ||
	    count < TASK_VM_INFO_REV1_COUNT) {
		return -1;
	}
	*footprint = info.phys_footprint;
	*resident = info.resident_size;
	return 0;
}

// orchard_vm_memory reads system-wide wired and available bytes; available
// counts free, inactive, purgeable and speculative pages.
static int orchard_vm_memory(uint64_t *wired, uint64_t *available) {
	mach_port_t host = mach_host_self();
	vm_statistics64_data_t vm;
	mach_msg_type_number_t count = HOST_VM_INFO64_COUNT;
	kern_return_t kr = host_statistics64(host, HOST_VM_INFO64, (host_info64_t)&vm, &count);
	mach_port_deallocate(mach_task_self(), host);
	if (kr != KERN_SUCCESS) {
		return -1;
	}
	uint64_t page = (uint64_t)vm_kernel_page_size;
	*wired = (uint64_t)vm.wire_count * page;
	*available = ((uint64_t)vm.free_count + vm.inactive_count + vm.purgeable_count + vm.speculative_count) * page;
	return 0;
}

// orchard_memsize reads hw.memsize.
static int orchard_memsize(uint64_t *out) {
	size_t len = sizeof(*out);
	return sysctlbyname("hw.memsize", out, &len, NULL, 0);
}
*/
import "C"

import (
	"errors"

	"github.com/progrium/darwinkit/macos/foundation"
	"github.com/progrium/darwinkit/objc"
)

// Read reads the ledger from Mach (task_info TASK_VM_INFO,
// host_statistics64), sysctl hw.memsize and NSProcessInfo thermalState.
func Read() (Memory, error) {
	var footprint, resident, wired, available, physical C.uint64_t
	if C.orchard_task_memory(&footprint, &resident) != 0 {
		return Memory{}, errors.New("memory ledger: task_info(TASK_VM_INFO) failed")
	}
	if C.orchard_vm_memory(&wired, &available) != 0 {
		return Memory{}, errors.New("memory ledger: host_statistics64 failed")
	}
	if C.orchard_memsize(&physical) != 0 {
		return Memory{}, errors.New("memory ledger: sysctl hw.memsize failed")
	}
	var thermal foundation.ProcessInfoThermalState
	objc.WithAutoreleasePool(func() {
		thermal = foundation.ProcessInfo_ProcessInfo().ThermalState()
	})
	return Memory{
		Footprint: uint64(footprint),
		Resident:  uint64(resident),
		Wired:     uint64(wired),
		Available: uint64(available),
		Physical:  uint64(physical),
		Thermal:   thermalName(int(thermal)),
	}, nil
}
