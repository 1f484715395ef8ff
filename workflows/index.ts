// Every workflow type the worker registers.
export { purgeExpiredAuth } from './maintenance.js';
export { grantMonthlyCredits } from './credits.js';
