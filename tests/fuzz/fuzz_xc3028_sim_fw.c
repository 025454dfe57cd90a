// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the simulated box's XC3028 firmware-file model
 * (kmod/sim/fwfile_xc3028.c): parse into images and payload streams,
 * then name every image as the box's log does.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fwfile_xc3028.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct xc3028_fw fw;
	char err[256] = "", name[160];

	if (xc3028_fw_parse(data, size, &fw, err, sizeof(err))) {
		if (!err[0] || fw.images || fw.file)
			abort();
		return 0;
	}
	if (!fw.count || !fw.images || fw.file_len != size)
		abort();
	for (size_t i = 0; i < fw.count; i++) {
		const struct xc3028_image *img = &fw.images[i];

		if (img->data < fw.file ||
		    img->data + img->size > fw.file + fw.file_len ||
		    img->stream_len > img->size)
			abort();
		xc3028_fw_image_name(img, name, sizeof(name));
		xc3028_fw_image_name(img, name, 8);
		if (memchr(name, '\0', 8) == NULL)
			abort();
	}
	xc3028_fw_release(&fw);
	return 0;
}
