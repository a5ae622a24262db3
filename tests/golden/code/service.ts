import { check, other as o } from './auth';
import * as path from 'path';
const fs = require('fs');

/** A user. */
export interface User {
  id: number;
  greet(): string;
}

export class Service extends Base {
  handler = (req) => { check(req); };
  async run(x: number): Promise<void> {
    await this.db.save(x);
  }
}

export const add = (a: number, b: number): number => a + b;
const sub = function (a) { return a; };
export function main() { router.get('/users/:id', getUser); }
enum Color { Red }
type Alias = string;
