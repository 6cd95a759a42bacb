// The order files start in: the process project's files first, then the rest as vitest orders
// them (its projects one after another, the longest or largest files first). Each process file
// starts the service as child processes and is among the suite's longest (process.test.ts alone
// is about a third of one worker's share): started last, as vitest's order of projects by name
// had it, one worker ran it alone at the end while the other sat idle.
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const startsFirst = (spec: TestSpecification) => spec.project.name === 'process';

export class ProcessFilesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    return [...sorted.filter(startsFirst), ...sorted.filter((spec) => !startsFirst(spec))];
  }
}
