/** CSV inputs: the tasks of a `file_input_id`, read from the form its upload was parsed into (core/batch/inputs). */
import type { Db } from 'mongodb';
import { inputTasks } from './inputs/uploads';
import type { TaskInput } from './task-input';

export async function parseCsvTasks(db: Db, accountId: string, inputId: string): Promise<TaskInput[]> {
  return inputTasks(db, accountId, inputId);
}
