/* A file without regions: copied byte for byte.
 * The words BEGIN SOLUTION alone are not a marker. */
#include <stdio.h>

int
main(int argc, char **argv)
{
	(void)argc; (void)argv;
	puts("\"hi\"  ");   
	return 0;
}

/* no newline at the end */