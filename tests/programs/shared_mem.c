/* A program that keeps state in shared memory: an anonymous shared
 * mapping, a System V segment that a child process fills before the
 * program attaches it, and a POSIX shared memory object written before
 * it is mapped shared and writable, then unlinked
 * (tests/reverse/shared_memory.py). mark(i) writes all three, so every position between two marks has its own values there:
 * a replay going back must show them as the run had them, not what a
 * later position of the replay (or a copy of it) wrote. The segment is
 * then attached a second time read-only, detached, and removed. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <unistd.h>

static int *counter; /* an anonymous shared mapping */
static int *seg;     /* the System V segment */
static int *posix;   /* the POSIX shared memory object */

static void mark(int i)
{
	counter[0] = i;
	seg[1] = 2 * i;
	posix[2] = 3 * i;
	getppid();
}

static int done(int sum)
{
	return sum;
}

int main(void)
{
	int id = shmget(IPC_PRIVATE, 6000, IPC_CREAT | 0600);
	if (id < 0)
		return 1;
	/* The child's writes come before the attach: the recording holds
	 * them as the bytes the attach found. It keeps the segment attached
	 * until the program has attached it too (the recorder says that
	 * another process has it), and writes nothing after. */
	int ready[2], go[2];
	if (pipe(ready) != 0 || pipe(go) != 0)
		return 1;
	pid_t child = fork();
	if (child == 0) {
		char *mine = shmat(id, NULL, 0);
		char c = 0;
		if (mine == (void *)-1)
			_exit(1);
		strcpy(mine + 16, "written by the child");
		if (write(ready[1], "r", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(1);
		_exit(0);
	}
	char c;
	int st;
	if (child < 0 || read(ready[0], &c, 1) != 1)
		return 1;
	counter = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	seg = shmat(id, NULL, 0);
	if (write(go[1], "g", 1) != 1 || waitpid(child, &st, 0) != child || st != 0)
		return 1;
	if (counter == MAP_FAILED || seg == (void *)-1)
		return 1;
	/* A child made now shares counter and seg: the recorder says that
	 * what it writes there is not recorded (it writes nothing). */
	pid_t quiet = fork();
	if (quiet == 0)
		_exit(0);
	if (quiet < 0 || waitpid(quiet, &st, 0) != quiet || st != 0)
		return 1;
	/* Its bytes as the mapping found them are recorded; the replay has
	 * no object to map (unlinked), and would find later bytes if it had. */
	char name[64];
	snprintf(name, sizeof name, "/ptrev-shared-mem-%d", (int)getpid());
	int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
	static const char before[] = "written before the mapping";
	if (fd < 0 || ftruncate(fd, 4096) != 0 ||
	    pwrite(fd, before, sizeof before, 32) != (ssize_t)sizeof before)
		return 1;
	posix = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	shm_unlink(name);
	close(fd);
	if (posix == MAP_FAILED)
		return 1;
	for (int i = 1; i <= 30; i++)
		mark(i);
	const int *again = shmat(id, NULL, SHM_RDONLY);
	int sum = done(again == (void *)-1 ? -1 : again[1] + counter[0] + posix[2]);
	if (again != (void *)-1)
		shmdt(again);
	shmdt(seg);
	shmctl(id, IPC_RMID, NULL);
	printf("sum=%d\n", sum);
	return 0;
}
